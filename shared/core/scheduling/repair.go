package scheduling

import (
	"fmt"
	"slices"
)

// repairSpread enforces maxSkew on zone spread groups after packing. spreadAllows lets a zone fill up
// to its share of the balanced final distribution, which is only valid if the other zones' pods are
// placed too; when some of them failed, the newest pods in over-full zones are taken off their claims
// and reported, so that every claim's pods can really bind.
func (s *solver) repairSpread() {
	if s.topo == nil {
		return
	}
	for _, g := range s.topo.order {
		if g.kind != kindSpread || g.key == LabelHostname || g.preferred {
			continue
		}
		for s.overSkewed(g) {
			if !s.dropNewest(g) {
				break
			}
		}
	}
}

// overSkewed reports whether a zone exceeds the least-filled zone by more than maxSkew.
func (s *solver) overSkewed(g *topoGroup) bool {
	hi, lo := s.spreadRange(g)
	return hi-lo > g.maxSkew
}

func (s *solver) spreadRange(g *topoGroup) (hi, lo int) {
	lo = -1
	zones := s.topo.eligibleDomains(g)
	for _, z := range zones {
		n := g.counts[z]
		hi = max(hi, n)
		if lo < 0 || n < lo {
			lo = n
		}
	}
	if len(zones) < g.minDomains {
		lo = 0
	}
	return hi, max(lo, 0)
}

// dropNewest removes the most recently added pod owning g from a claim in the fullest zone.
func (s *solver) dropNewest(g *topoGroup) bool {
	hi, _ := s.spreadRange(g)
	for i := len(s.claims) - 1; i >= 0; i-- {
		cl := s.claims[i]
		zone := singleValue(cl.reqs, g.key)
		if zone == "" || g.counts[zone] != hi {
			continue
		}
		for j := len(cl.pods) - 1; j >= 0; j-- {
			st := cl.steps[j]
			if st.topo == nil || !slices.Contains(st.topo.owned, g) {
				continue
			}
			pod := cl.pods[j]
			for _, m := range st.topo.matching {
				if d := singleValue(cl.reqs, m.key); m.key != LabelHostname && d != "" && m.countsOn(cl.pool.Taints) {
					m.counts[d]--
					m.total--
					m.changed()
				}
			}
			cl.remove(j)
			s.failed = append(s.failed, newPodFailure(pod, st.Relaxed, []Rejection{{NodePool: cl.pool.Name, Constraint: ConstraintTopology,
				Detail: fmt.Sprintf("zone spread (maxSkew %d) cannot be met: pods of the same spread group could not be placed in the other zones", g.maxSkew)}}))
			return true
		}
	}
	return false
}
