package disruption

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// compactNodes returns the destinations as a simulation needs them, or nil when it needs them
// whole. Most of a simulation's time goes into summing the requests of every pod bound to every
// node; when no pod anywhere has topology rules (spread, pod affinity or anti-affinity), the
// scheduler reads a bound pod only for its requests, its host ports, whether it is a DaemonSet
// pod and, when some node limits CSI attachments (volumes), its claims. Then each node's pods other
// than DaemonSet, host-port and (with volumes) claim-holding pods are folded into its allocatable
// once, and every simulation of the run reuses that: the same answer, computed from a few pods per
// node instead of all of them.
func compactNodes(dests []scheduling.ExistingNode, moving []*corev1.Pod, cache *podCache, volumes bool) []scheduling.ExistingNode {
	for _, p := range moving {
		if hasTopology(p) {
			return nil
		}
	}
	for _, n := range dests {
		for _, p := range n.Pods {
			if hasTopology(p) {
				return nil
			}
		}
	}
	out := make([]scheduling.ExistingNode, len(dests))
	for i, n := range dests {
		var keep []*corev1.Pod
		var folded scheduling.Resources
		for _, p := range n.Pods {
			switch {
			case !isActive(p):
				// the scheduler ignores finished and terminating pods
			case ownedBy(p, "DaemonSet") || len(scheduling.PodHostPorts(p)) > 0 || (volumes && hasClaim(p)):
				keep = append(keep, p)
			default:
				folded = folded.Add(cache.podRequests(p))
			}
		}
		alloc := scheduling.ResourcesFromList(n.Node.Status.Allocatable)
		if alloc.IsZero() {
			alloc = n.Allocatable
		}
		node := *n.Node
		node.Status.Allocatable = alloc.Sub(folded).List()
		c := n
		c.Node, c.Pods, c.Allocatable = &node, keep, alloc.Sub(folded)
		out[i] = c
	}
	return out
}

// hasTopology reports whether the pod has topology spread constraints or pod (anti-)affinity.
func hasTopology(p *corev1.Pod) bool {
	if len(p.Spec.TopologySpreadConstraints) > 0 {
		return true
	}
	a := p.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// hasClaim reports whether the pod has a persistent or generic ephemeral volume, which may count
// against its node's CSI attach limit.
func hasClaim(p *corev1.Pod) bool {
	for i := range p.Spec.Volumes {
		if v := &p.Spec.Volumes[i]; v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			return true
		}
	}
	return false
}
