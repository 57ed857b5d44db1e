// Package footprint describes everything Nodewright puts in a cluster (DESIGN.md decision 3): for each
// function that calls the API server, a least-privilege ClusterRole bound to that function's own group
// (its EKS access entry maps the function's IAM role to it; only termination may delete Nodes and pods or
// evict), and one ValidatingWebhookConfiguration that sends kube-scheduler's FailedScheduling Events to the
// pending-pod webhook (off its scheduling loop; see webhook.go); and the read-only mirror CRDs of
// nodewright.sh with the ValidatingAdmissionPolicy that lets only the mirror writers' groups change them
// (mirrors.go, DESIGN.md decision 14). Nothing else runs in the cluster.
// `nodewright manifests` prints these objects (without the webhook for a deployment that has none); the
// CDK app can apply them.
package footprint
