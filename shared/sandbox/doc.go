// Package sandbox runs Nodewright's whole loop on one machine: moto for the AWS APIs, a real local control
// plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager), the functions' use cases behind
// their real event sources (the API server calls the pending-pod webhook over HTTPS; the queues are moto
// SQS, polled the way Lambda's event source mappings poll them; schedules are tickers), and a node agent
// that stands in for the kubelet: it turns launched instances into Nodes carrying the labels and taints of
// their launch template's user data, and runs the pods bound to them.
//
// `nodewright demo` and the scenario tests drive it. Nothing here is used by the deployed functions.
package sandbox
