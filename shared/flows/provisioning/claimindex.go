package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ClaimIndex finds the claim behind a Node. A Node is Nodewright's only when one of its claims stands
// for it: Karpenter's Nodes (beside it during a migration) carry the same karpenter.sh labels and
// taints, even the same NodePool names, and say nothing about Nodewright's pools, limits or drains.
type ClaimIndex struct {
	byProvider, byName map[string]state.Claim
}

// NewClaimIndex indexes the claims that still stand for a Node (not deleted) by the provider id their
// launch recorded and by the Node name their registration recorded.
func NewClaimIndex(claims []state.Claim) ClaimIndex {
	x := ClaimIndex{byProvider: map[string]state.Claim{}, byName: map[string]state.Claim{}}
	for _, c := range claims {
		if c.Lifecycle == state.Deleted {
			continue
		}
		if id := c.NodeProviderID(); id != "" {
			x.byProvider[id] = c
		}
		if c.NodeName != "" {
			x.byName[c.NodeName] = c
		}
	}
	return x
}

// Of returns the claim standing for n. A Node with a provider id is matched by it; by its name only when
// the Node has no provider id yet or the claim recorded none, so a Karpenter Node that took over the
// private DNS name of one of Nodewright's terminated instances is never mistaken for it.
func (x ClaimIndex) Of(n *corev1.Node) (state.Claim, bool) {
	if id := n.Spec.ProviderID; id != "" {
		if c, ok := x.byProvider[id]; ok {
			return c, true
		}
	}
	c, ok := x.byName[n.Name]
	if !ok || (n.Spec.ProviderID != "" && c.NodeProviderID() != "") {
		return state.Claim{}, false
	}
	return c, true
}
