package lifecycle

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Labels, annotations and taints of the join (Karpenter's).
const (
	RegisteredLabel      = "karpenter.sh/registered"
	InitializedLabel     = "karpenter.sh/initialized"
	UnregisteredTaintKey = "karpenter.sh/unregistered"
	// DoNotSyncTaintsLabel "true" on a Node (set by the kubelet's --node-labels) keeps registration from
	// putting the NodePool's taints and startup taints on it, as Karpenter reads it: a label.
	DoNotSyncTaintsLabel = "karpenter.sh/do-not-sync-taints"
)

// Expected is what the claim's NodePool asks of its Node.
type Expected struct {
	ProviderID string
	Labels     map[string]string
	// Annotations are the NodePool's template annotations (spec.template.metadata.annotations).
	Annotations   map[string]string
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
	// ExtendedResources are the non-zero extended resources the claim's pods requested (e.g.
	// nvidia.com/gpu); initialization waits until the Node's allocatable has each of them.
	ExtendedResources []corev1.ResourceName
}

// Patch is what to change on the Node; applying it twice changes nothing more.
type Patch struct {
	SetLabels      map[string]string
	SetAnnotations map[string]string
	AddTaints      []corev1.Taint
	RemoveTaints   []string // taint keys
}

// Empty reports whether the patch changes nothing.
func (p Patch) Empty() bool {
	return len(p.SetLabels) == 0 && len(p.SetAnnotations) == 0 && len(p.AddTaints) == 0 && len(p.RemoveTaints) == 0
}

// Registration is the outcome of looking for the claim's Node.
type Registration struct {
	// Node is the claim's Node, nil when it has not registered yet.
	Node *corev1.Node
	// Reason says why the claim is not registered yet (NodeNotFound, MultipleNodesFound).
	Reason string
	Patch  Patch
	// Warnings are events to record (UnregisteredTaintMissing).
	Warnings []string
}

// Register finds the Node with the claim's providerID and says what to patch to register it: the
// expected labels and annotations, the taints (unless the Node opts out of taint sync), the registered
// label, and lifting karpenter.sh/unregistered.
func Register(exp Expected, nodes []*corev1.Node) Registration {
	var found []*corev1.Node
	for _, n := range nodes {
		if exp.ProviderID != "" && n.Spec.ProviderID == exp.ProviderID {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return Registration{Reason: "NodeNotFound"}
	case 1:
	default:
		names := make([]string, len(found))
		for i, n := range found {
			names[i] = n.Name
		}
		sort.Strings(names)
		return Registration{Reason: fmt.Sprintf("MultipleNodesFound: %v", names)}
	}
	node := found[0]
	r := Registration{Node: node, Patch: Patch{SetLabels: map[string]string{}}}
	if node.Labels[RegisteredLabel] != "true" && !hasTaint(node, UnregisteredTaintKey) {
		r.Warnings = append(r.Warnings, "UnregisteredTaintMissing: the Node joined without karpenter.sh/unregistered:NoExecute; workloads may have landed before its labels and taints were set")
	}
	for k, v := range exp.Labels {
		if node.Labels[k] != v {
			r.Patch.SetLabels[k] = v
		}
	}
	for k, v := range exp.Annotations {
		if cur, ok := node.Annotations[k]; !ok || cur != v {
			if r.Patch.SetAnnotations == nil {
				r.Patch.SetAnnotations = map[string]string{}
			}
			r.Patch.SetAnnotations[k] = v
		}
	}
	if node.Labels[DoNotSyncTaintsLabel] != "true" && node.Labels[RegisteredLabel] != "true" {
		for _, t := range append(append([]corev1.Taint{}, exp.Taints...), exp.StartupTaints...) {
			if !hasExactTaint(node, t) {
				r.Patch.AddTaints = append(r.Patch.AddTaints, t)
			}
		}
	}
	if hasTaint(node, UnregisteredTaintKey) {
		r.Patch.RemoveTaints = append(r.Patch.RemoveTaints, UnregisteredTaintKey)
	}
	if node.Labels[RegisteredLabel] != "true" {
		r.Patch.SetLabels[RegisteredLabel] = "true"
	}
	return r
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func hasExactTaint(n *corev1.Node, want corev1.Taint) bool {
	for _, t := range n.Spec.Taints {
		if t.MatchTaint(&want) && t.Value == want.Value {
			return true
		}
	}
	return false
}
