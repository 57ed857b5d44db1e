// Package awscalls records, for tests, every AWS SDK call a Nodewright function makes and what IAM would
// authorise for it (action, resource ARN and the condition keys of the request), and evaluates such
// authorisations against an IAM policy document. infra's iamproof test checks the recordings of the e2e
// tests against the roles the CDK app synthesizes; moto enforces no IAM, so nothing else would notice a
// call the deployed role denies.
//
// Recording is off unless $NODEWRIGHT_AWS_CALLS names a directory; each process then appends JSON lines
// to its own file there. It is an adapter for tests: no function's main imports it.
package awscalls
