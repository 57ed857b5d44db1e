// Package footprint describes everything Nodewright puts in a cluster (DESIGN.md decision 3): for each
// function that calls the API server, a least-privilege ClusterRole bound to that function's own group
// (its EKS access entry maps the function's IAM role to it; only termination may delete Nodes and pods or
// evict), and one ValidatingWebhookConfiguration that sends kube-scheduler's "Unschedulable" status updates to the
// pending-pod webhook. Nothing else runs in the cluster. `nodewright manifests` prints these objects; the
// CDK app can apply them.
package footprint
