// Package e2e holds the lifecycle runner's end-to-end tests: passes against a real moto (EC2, DynamoDB)
// and a real local kube-apiserver, wired with the real adapters as functions/lifecycle wires them. It has
// no code of its own; its TestMain starts and stops both servers. It is a separate package so that
// package lifecycle's own tests stay pure.
package e2e
