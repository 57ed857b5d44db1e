package scalebench

import (
	"fmt"
	"strconv"
	"strings"
)

// Tier is one cluster size the harness measures.
type Tier struct {
	Nodes, Pods int
}

// Tiers are the sizes of issue #23: 30 pods per node, up to Kubernetes' supported ceiling.
var Tiers = []Tier{{Nodes: 1000, Pods: 30_000}, {Nodes: 2000, Pods: 60_000}, {Nodes: 5000, Pods: 150_000}}

// ParseTiers reads SCALE_TIERS: node counts separated by commas ("1000,2000"); empty means every tier.
func ParseTiers(s string) ([]Tier, error) {
	if strings.TrimSpace(s) == "" {
		return append([]Tier(nil), Tiers...), nil
	}
	var out []Tier
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("SCALE_TIERS: %q is not a node count", f)
		}
		found := false
		for _, t := range Tiers {
			if t.Nodes == n {
				out, found = append(out, t), true
			}
		}
		if !found {
			return nil, fmt.Errorf("SCALE_TIERS: no tier of %d nodes (tiers: 1000, 2000, 5000)", n)
		}
	}
	return out, nil
}

func (t Tier) String() string { return fmt.Sprintf("%d nodes / %d pods", t.Nodes, t.Pods) }
