package provisioning

import (
	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// subnetMoves are the subnets one launch left because a fleet found them without a free address: full
// subnet id → the zone's next subnet the launch moved to, "" when the zone had none left.
type subnetMoves map[string]string

// full moves the launch off each full subnet (hold.full marks it for the run and picks the zone's next).
func (m subnetMoves) full(hold *subnetHold, subnets []instance.ExhaustedSubnet) {
	for _, s := range subnets {
		if _, done := m[s.SubnetID]; !done {
			m[s.SubnetID] = hold.full(s)
		}
	}
}

// apply points the overrides of a full subnet at the zone's next one, and drops them when there is none.
func (m subnetMoves) apply(overrides []instance.Override) []instance.Override {
	if len(m) == 0 {
		return overrides
	}
	out := make([]instance.Override, 0, len(overrides))
	for _, o := range overrides {
		next, moved := m[o.SubnetID]
		// A subnet moved to may itself have filled up since: follow the moves (each subnet is left once).
		for seen := 0; moved && next != "" && seen < len(m); seen++ {
			if again, ok := m[next]; ok {
				next = again
				continue
			}
			break
		}
		switch {
		case !moved:
		case next == "":
			continue
		default:
			o.SubnetID = next
		}
		out = append(out, o)
	}
	return out
}

// after is what remains of a launch's overrides after an answer that named failed offerings and full
// subnets: the failed offerings dropped, the full subnets' overrides moved (or dropped), and, when the
// answer named neither, everything tried dropped, so the loop always makes progress.
func (m subnetMoves) after(hold *subnetHold, remaining []instance.Override, failed []instance.Offering,
	subnets []instance.ExhaustedSubnet, tried []instance.Override) []instance.Override {
	if len(subnets) == 0 {
		return m.apply(without(remaining, failed, tried))
	}
	m.full(hold, subnets)
	if len(failed) > 0 {
		remaining = without(remaining, failed, tried)
	}
	return m.apply(remaining)
}

// fullSubnets is the suffix of a failed launch's error that names the subnets found full, "" for none.
func fullSubnets(subnets []instance.ExhaustedSubnet) string {
	if len(subnets) == 0 {
		return ""
	}
	seen := map[string]bool{}
	var unique []instance.ExhaustedSubnet
	for _, s := range subnets {
		if !seen[s.SubnetID] {
			seen[s.SubnetID] = true
			unique = append(unique, s)
		}
	}
	return "; " + instance.ExhaustedSubnets(unique)
}
