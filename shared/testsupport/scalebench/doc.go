// Package scalebench is the scale harness behind `make bench-scale` (issue #23, DESIGN decision 12): it
// generates a cluster of realistic objects, loads it into a local control plane and moto, and measures
// each function's real use case against it in a process of its own.
//
//   - Generation (plan.go, node.go, pod.go, managedfields.go, shapes.go) is pure and seeded: the same seed
//     and tier give the same cluster. Nodes are shaped like EKS nodes that Karpenter launched (labels,
//     annotations, ~50 status.images, conditions, addresses, managedFields from several managers); pods
//     like Deployment, StatefulSet and DaemonSet pods (owner references, env, volumes, probes, init and
//     sidecar containers, containerStatuses, managedFields), with a median above 4 KB as protobuf.
//   - Loading (env.go, load.go) starts a fresh etcd + kube-apiserver (shared/testsupport/kubetest) and moto
//     (shared/testsupport/awstest) per tier, applies the benchmark's NodePools and EC2NodeClass as the sandbox does,
//     runs an EC2 instance in moto per Node, writes the objects straight into the API server (Nodes Ready,
//     pods created bound, then their status) and the matching initialized claims through state.Store.
//   - Scenarios (scenario*.go) set up what each function's run needs (pending pods, joining claims, a
//     110-pod node to drain, interruption notices) and tidy up after it.
//   - Measurement (measure.go, counting.go, child.go) runs inside a child process that wires the use case
//     as functions/<fn>/main.go does, against moto and the local API server, with GOMEMLIMIT and the
//     memory of shared/core/sizing: peak RSS (VmHWM), peak heap (runtime/metrics), seconds, bytes read from the
//     API server, DynamoDB read units; then once more on the same warm process (the steady run).
//
// Nothing here is used by the deployed functions, and no test of `make test`'s default path starts a
// cluster: cmd/scalebench drives it.
package scalebench
