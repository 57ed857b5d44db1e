// Package e2e holds the provisioner's end-to-end test: one provisioning run against a real moto (EC2,
// IAM, SSM, DynamoDB) and a real local control plane (kube-apiserver and kube-scheduler), wired with the
// real adapters. It has no code of its own; its TestMain starts and stops both servers.
package e2e
