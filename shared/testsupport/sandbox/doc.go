// Package sandbox runs Nodewright's whole loop on one machine: moto for the AWS APIs, a real local control
// plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager), the functions' use cases behind
// their real event sources (the API server calls the pending-pod webhook over HTTPS; the queues are moto
// SQS, polled the way Lambda's event source mappings poll them; schedules are tickers), and a node agent
// that stands in for the kubelet: it turns launched instances into Nodes carrying the labels and taints of
// their launch template's user data, and runs the pods bound to them. The nodewright.sh mirror CRDs and their
// read-only policy are installed as `nodewright manifests` prints them, and the functions write the
// NodeClaim mirrors as deployed, so kubectl against the sandbox's API server shows the claims
// (mirrors.go, mirrortable.go; mirrorwatch.go and mirrorcheck.go measure them for the scale-up report).
//
// `nodewright demo` and the scenario tests drive it. Nothing here is used by the deployed functions.
package sandbox
