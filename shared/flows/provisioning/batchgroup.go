package provisioning

import (
	"encoding/json"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// launchKey is what makes two planned claims' launches identical: the same NodePool (so the same node
// class, template labels, taints and tags), requirements (zones, capacity types, labels), instance-type
// options, reservation and relaxed minValues (a relaxed claim launches without the fleet context). Such claims can share one CreateFleet; their pods and requests may differ,
// which only their own claim records hold.
func launchKey(cp scheduling.ClaimPlan) string {
	b, err := json.Marshal(struct {
		NodePool      string
		Requirements  []scheduling.NodeSelectorRequirement
		Options       []string
		ReservationID string
		Relaxed       bool
	}{cp.NodePool, cp.Requirements, cp.InstanceTypeOptions, cp.ReservationID, cp.MinValuesRelaxed})
	if err != nil { // plain strings and slices of them always marshal; keep such a claim alone
		return "unbatchable/" + cp.Name
	}
	return string(b)
}

// groupClaims splits planned claims into batches of identical launches (see launchKey) of at most max
// claims each, in the order each key first appears and each claim within its key, so the same plan
// always batches the same way.
func groupClaims(claims []scheduling.ClaimPlan, max int) [][]scheduling.ClaimPlan {
	if max < 1 {
		max = 1
	}
	var order []string
	byKey := map[string][]scheduling.ClaimPlan{}
	for _, cp := range claims {
		k := launchKey(cp)
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], cp)
	}
	var out [][]scheduling.ClaimPlan
	for _, k := range order {
		group := byKey[k]
		for len(group) > max {
			out = append(out, group[:max])
			group = group[max:]
		}
		out = append(out, group)
	}
	return out
}
