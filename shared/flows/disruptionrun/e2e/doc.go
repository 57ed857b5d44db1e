// Package e2e tests the consolidation runner with its real adapters: DynamoDB, EC2 and SQS in moto, and
// a local kube-apiserver, as functions/disruption wires them.
package e2e
