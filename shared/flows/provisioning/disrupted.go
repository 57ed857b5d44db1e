package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// disruptedNodes names Nodewright's Nodes on their way out: those carrying karpenter.sh/disrupted:NoSchedule
// and those whose claim is draining (the taint may not be written yet). Their pods are reschedulable and
// the Nodes themselves no longer count as capacity, so replacement capacity is launched before the
// drain evicts anything. A Node no claim of Nodewright's stands for is another provisioner's: Karpenter
// taints its own Nodes karpenter.sh/disrupted too, and launches their replacements itself.
func disruptedNodes(snap *kube.Snapshot, claims ClaimIndex) map[string]bool {
	out := map[string]bool{}
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		c, ours := claims.Of(n)
		if ours && (c.Lifecycle == state.Draining || hasDisruptedTaint(n)) {
			out[n.Name] = true
		}
	}
	return out
}

func hasDisruptedTaint(n *corev1.Node) bool {
	for i := range n.Spec.Taints {
		if n.Spec.Taints[i].MatchTaint(&apis.DisruptedNoScheduleTaint) {
			return true
		}
	}
	return false
}

// reschedulablePods are the pods bound to disrupted Nodes that will need a place once the drain evicts
// them: not DaemonSet pods (their DaemonSet places them), not static or mirror pods, not finished or
// terminating pods, and not pods that tolerate the disrupted taint (the drain leaves them).
func reschedulablePods(snap *kube.Snapshot, disrupted map[string]bool) []*corev1.Pod {
	if len(disrupted) == 0 {
		return nil
	}
	var out []*corev1.Pod
	for _, p := range snap.Bound {
		if disrupted[p.Spec.NodeName] && reschedulable(p) {
			out = append(out, p)
		}
	}
	return out
}

func reschedulable(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" || o.Kind == "Node" {
			return false
		}
	}
	for i := range p.Spec.Tolerations {
		if p.Spec.Tolerations[i].ToleratesTaint(&apis.DisruptedNoScheduleTaint) {
			return false
		}
	}
	return true
}

// withoutDisrupted drops the disrupted Nodes from the scheduler's view of existing capacity.
func withoutDisrupted(nodes []scheduling.ExistingNode, disrupted map[string]bool) []scheduling.ExistingNode {
	if len(disrupted) == 0 {
		return nodes
	}
	out := nodes[:0:0]
	for _, n := range nodes {
		if !disrupted[n.Node.Name] {
			out = append(out, n)
		}
	}
	return out
}
