package provisioning

import (
	"slices"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// claimsByNode maps the Node name of every live claim to the claim's name.
func claimsByNode(claims []state.Claim) map[string]string {
	out := map[string]string{}
	for _, c := range claims {
		if c.NodeName != "" && c.Lifecycle.Live() {
			out[c.NodeName] = c.Name
		}
	}
	return out
}

// replacedClaims names the claims of disrupted Nodes whose pods the planned claim takes: it is launched
// to replace them (state.Claim.Replaces), and their drains wait for it to initialize before they evict
// (termination's gate), while claims launched for other pods hold no drain.
func replacedClaims(cp scheduling.ClaimPlan, disrupted map[string]bool, byNode map[string]string) []string {
	var out []string
	for _, p := range cp.Pods {
		if name, ok := byNode[p.Spec.NodeName]; ok && disrupted[p.Spec.NodeName] && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
