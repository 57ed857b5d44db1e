package provisioning

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// ClusterReader reads the whole cluster at once; *kube.Snapshotter satisfies it.
type ClusterReader interface {
	Snapshot(ctx context.Context) (*kube.Snapshot, error)
}

var _ ClusterReader = (*kube.Snapshotter)(nil)

// existingNodes turns the snapshot's Nodes into the scheduler's view, each with its bound pods. A Node
// carries its NodePool in the karpenter.sh/nodepool label and is initialized once Karpenter's
// karpenter.sh/initialized label is "true"; Nodes Nodewright does not manage always count as initialized.
// The label names one of Nodewright's NodePools only on a Node one of its claims stands for: Karpenter's
// Nodes carry the same label, with the same pool names during a migration, and must not use up
// Nodewright's NodePool limits, so they are unmanaged capacity here.
func existingNodes(snap *kube.Snapshot, claims ClaimIndex) []scheduling.ExistingNode {
	byNode := map[string][]*corev1.Pod{}
	for _, p := range snap.Bound {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	out := make([]scheduling.ExistingNode, 0, len(snap.Nodes))
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if n.DeletionTimestamp != nil {
			continue
		}
		label := n.Labels[scheduling.LabelNodePool]
		pool := ""
		if _, ours := claims.Of(n); ours {
			pool = label
		}
		out = append(out, scheduling.ExistingNode{Node: n, Pods: byNode[n.Name], NodePool: pool,
			Initialized: label == "" || n.Labels[scheduling.LabelNodeInitalized] == "true"})
	}
	return out
}

// provisionablePods are the snapshot's pending pods kube-scheduler gave up on (scheduling.IsProvisionable).
func provisionablePods(snap *kube.Snapshot) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range snap.Pending {
		if p.DeletionTimestamp == nil && scheduling.IsProvisionable(p) {
			out = append(out, p)
		}
	}
	return out
}

// joinedNodes are the snapshot's Nodes that can take pods: their kubelet has posted an allocatable. A
// claim whose Node is among them (by provider id or by name) is an existing node, not in flight.
type joinedNodes struct{ byProviderID, byName map[string]bool }

// has reports whether c's Node has joined.
func (j joinedNodes) has(c state.Claim) bool {
	return (c.ProviderID != "" && j.byProviderID[c.ProviderID]) || (c.NodeName != "" && j.byName[c.NodeName])
}

// joined finds the snapshot's joined Nodes.
func joined(snap *kube.Snapshot) joinedNodes {
	out := joinedNodes{byProviderID: map[string]bool{}, byName: map[string]bool{}}
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if len(n.Status.Allocatable) == 0 {
			continue
		}
		out.byName[n.Name] = true
		if id := n.Spec.ProviderID; id != "" {
			out.byProviderID[id] = true
		}
	}
	return out
}

// requestStrings turns requests into the claim record's map of quantities.
func requestStrings(r scheduling.Resources) map[string]string {
	out := map[string]string{}
	for k, v := range r.List() {
		out[string(k)] = v.String()
	}
	return out
}

// parseRequests is requestStrings' inverse; quantities that do not parse are left out.
func parseRequests(m map[string]string) scheduling.Resources {
	l := corev1.ResourceList{}
	for k, v := range m {
		if q, err := resource.ParseQuantity(v); err == nil {
			l[corev1.ResourceName(k)] = q
		}
	}
	return scheduling.ResourcesFromList(l)
}
