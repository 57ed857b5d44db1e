// Package adapters groups the code that talks to the world outside a function: EC2 (instance,
// instancetypes, launchtemplate, nodeclass, pricing), DynamoDB (state), the API server (kube, mirror,
// capacitybuffer, footprint), CloudWatch (metrics), SQS and the Lambda runtime (sqsbatch,
// provisioningqueue, runbudget, crash), Secrets Manager (webhooktoken), and the start every function
// shares (connect).
//
// An adapter imports core packages and other adapters, never a flow or test support. Flows, the
// function mains and the CLI import adapters. shared/testsupport/layout's test checks the rule.
package adapters
