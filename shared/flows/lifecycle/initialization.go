package lifecycle

import (
	corev1 "k8s.io/api/core/v1"
)

// knownEphemeralTaints are set by Kubernetes itself while a node comes up and go away on their own.
var knownEphemeralTaints = []string{
	corev1.TaintNodeNotReady,
	corev1.TaintNodeUnreachable,
	"node.cloudprovider.kubernetes.io/uninitialized",
}

// Initialization says whether a registered Node is initialized and, if not, why.
type Initialization struct {
	Initialized bool
	// Reason while waiting: NodeNotReady, StartupTaintsExist, KnownEphemeralTaintsExist,
	// ResourceNotRegistered.
	Reason string
	Patch  Patch
}

// Initialize checks a registered Node against the claim's expectations.
func Initialize(exp Expected, node *corev1.Node) Initialization {
	if node.Labels[InitializedLabel] == "true" {
		return Initialization{Initialized: true}
	}
	if !ready(node) {
		return Initialization{Reason: "NodeNotReady"}
	}
	for _, st := range exp.StartupTaints {
		if hasExactTaint(node, st) {
			return Initialization{Reason: "StartupTaintsExist: " + st.ToString()}
		}
	}
	for _, key := range knownEphemeralTaints {
		if hasTaint(node, key) {
			return Initialization{Reason: "KnownEphemeralTaintsExist: " + key}
		}
	}
	for _, r := range exp.ExtendedResources {
		if q, ok := node.Status.Allocatable[r]; !ok || q.IsZero() {
			return Initialization{Reason: "ResourceNotRegistered: " + string(r)}
		}
	}
	return Initialization{Initialized: true, Patch: Patch{SetLabels: map[string]string{InitializedLabel: "true"}}}
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
