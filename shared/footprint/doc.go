// Package footprint describes everything Nodewright puts in a cluster (DESIGN.md decision 3): a
// least-privilege ClusterRole bound to the group the functions' EKS access entry maps their IAM role to,
// and one ValidatingWebhookConfiguration that sends kube-scheduler's "Unschedulable" status updates to the
// pending-pod webhook. Nothing else runs in the cluster. `nodewright manifests` prints these objects; the
// CDK app can apply them.
package footprint
