package provisioning

import (
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// StaticCounts counts every NodePool's claims among claims in one pass, as CountStatic counts one pool's:
// what `nodewright status` and the NodePool mirror writer show for a static pool, so they read the claims
// once however many pools there are.
func StaticCounts(claims []state.Claim) map[string]StaticCount {
	out := map[string]StaticCount{}
	for i := range claims {
		c := CountStatic(claims[i:i+1], claims[i].NodePool)
		if c == (StaticCount{}) {
			continue
		}
		t := out[claims[i].NodePool]
		t.Active, t.Deleting = t.Active+c.Active, t.Deleting+c.Deleting
		out[claims[i].NodePool] = t
	}
	return out
}

// StaticStatus is a static NodePool's count as operators see it: Replicas desired (spec.replicas) and
// Nodes current (the claims that stand for a node it keeps: Karpenter's NodePool status.nodes, the scale
// subresource's replicas), with Deleting those on their way out.
type StaticStatus struct {
	Replicas int64 `json:"replicas"`
	Nodes    int64 `json:"nodes"`
	Deleting int64 `json:"deleting"`
}

// StaticStatusOf is np's StaticStatus from counts (StaticCounts); false when np is not static. The
// NodePool mirror's writer calls it for status.nodes.
func StaticStatusOf(np *apis.NodePool, counts map[string]StaticCount) (StaticStatus, bool) {
	if np == nil || !np.IsStatic() {
		return StaticStatus{}, false
	}
	c := counts[np.Name]
	return StaticStatus{Replicas: max(*np.Spec.Replicas, 0), Nodes: c.Active, Deleting: c.Deleting}, true
}
