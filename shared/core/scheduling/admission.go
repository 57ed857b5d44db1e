package scheduling

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// admission is what a NodePool offers a pod class for a new claim.
type admission struct {
	reqs   Requirements
	front  []*candidate
	within []*candidate // candidates inside the pool's remaining limits
	fit    []*candidate // those that also hold the pod
	// narrowing is the pool's narrowing by the pod's requirements that the candidates come from.
	narrowing *narrowing
}

// admit checks, without changing anything, whether a new claim of the pool could take a pod of class
// c at step st, and says why not.
func (s *solver) admit(ps *poolState, c *podClass, st *classStep) (*admission, *Rejection) {
	if ps.preparedErr != nil {
		return nil, ps.preparedErr
	}
	if r := ps.tolerates(c, st); r != nil {
		return nil, r
	}
	n := ps.narrow(st)
	if n.err != nil {
		return nil, n.err
	}
	a := &admission{reqs: n.reqs, front: n.front, narrowing: n, within: make([]*candidate, 0, len(n.candidates)), fit: make([]*candidate, 0, len(n.candidates))}
	var limited []string
	for _, cand := range n.candidates {
		if ex := ps.limits.exceededBy(cand.it.Capacity); ex != nil {
			limited = ex
			continue
		}
		a.within = append(a.within, cand)
		if c.requests.Fits(cand.usable) && HostPortConflict(cand.ports, c.hostPorts) == nil {
			a.fit = append(a.fit, cand)
		}
	}
	if len(a.within) == 0 {
		return nil, &Rejection{NodePool: ps.Name, Constraint: ConstraintLimits, Detail: fmt.Sprintf("limits exhausted (%v): no instance type fits the remaining limits", limited)}
	}
	if len(a.fit) == 0 {
		for _, cand := range n.candidates {
			if c.requests.Fits(cand.usable) {
				return nil, &Rejection{NodePool: ps.Name, Constraint: ConstraintLimits, Detail: fmt.Sprintf(
					"instance types that fit (e.g. %s) would exceed the remaining limits (%v)", cand.it.Name, ps.limits.exceededBy(cand.it.Capacity))}
			}
		}
		if r := ps.blockedByReservations(n.reqs, func(cand *candidate) bool { return c.requests.Fits(cand.usable) }); r != nil {
			return nil, r
		}
		r := shortfall(ps.Name, a.within, c.requests)
		return nil, &r
	}
	if s.strict && ps.minValues {
		if err := checkMinValues(a.fit, n.reqs); err != nil {
			return nil, &Rejection{NodePool: ps.Name, Constraint: ConstraintMinValues, Detail: err.Error()}
		}
	}
	return a, nil
}

// openClaim starts a new claim of the pool holding the pod, or returns nil when the pool cannot.
func (s *solver) openClaim(ps *poolState, c *podClass, st *classStep, pod *corev1.Pod) *claim {
	a, r := s.admit(ps, c, st)
	if r != nil {
		return nil
	}
	target := s.chooseTarget(ps, a, c, st)
	cl := &claim{pool: ps, index: ps.claims, host: fmt.Sprintf("%s-%d", ps.Name, ps.claims), sigs: map[string]bool{}}
	cl.hostPorts = append(cl.hostPorts, target.ports...)
	ps.claims++
	cl.reserved = maxResources(a.fit, func(c *candidate) Resources { return c.it.Capacity })
	ps.limits.subtract(cl.reserved)
	// Without reservations, and when the limits left out no candidate of the narrowing, the claim's
	// state is the narrowing, and the states its merges reach depend on nothing else (claimstates.go).
	if ps.states != nil && !ps.reservations && len(a.within) == len(a.narrowing.candidates) {
		cl.state = ps.states.root(a.narrowing)
	}
	cl.commit(c, st, pod, c.requests, a.reqs, a.within, target)
	if s.res != nil {
		s.holdReservation(cl)
	}
	return cl
}

// diagnose lists why a pod of class c cannot be placed at step st: existing nodes summarised, then each
// NodePool's first blocking constraint.
func (s *solver) diagnose(c *podClass, st *classStep) []Rejection {
	var out []Rejection
	var nodes nodeRejections
	// Only the first refusal of each kind is quoted (nodeRejections), so only that one is worded:
	// a pod that fits nowhere on thousands of nodes used to format every node's refusal.
	pod := c.pods[c.next]
	for _, slot := range s.slots {
		if con := slot.fits(c, st, pod); con != "" {
			detail := ""
			if nodes.counts[con] == 0 {
				_, detail = slot.canAdd(c, st, pod)
			}
			nodes.add(con, detail)
		} else if !s.slotAllows(st, slot) {
			detail := ""
			if nodes.counts[ConstraintTopology] == 0 {
				detail = fmt.Sprintf("node %s: topology spread or pod (anti-)affinity", slot.name)
			}
			nodes.add(ConstraintTopology, detail)
		}
	}
	if r, ok := nodes.rejection(); ok {
		out = append(out, r)
	}
	for _, ps := range s.pools {
		if st.topo != nil && !s.topo.hostAllowed(st.topo, "") {
			out = append(out, Rejection{NodePool: ps.Name, Constraint: ConstraintTopology, Detail: "required pod affinity on hostname needs a node that already runs a matching pod"})
			continue
		}
		steps := s.newClaimSteps(st)
		if len(steps) == 0 {
			detail := s.noDomainDetail(st)
			out = append(out, Rejection{NodePool: ps.Name, Constraint: ConstraintTopology, Detail: detail})
			continue
		}
		if _, r := s.admit(ps, c, steps[len(steps)-1]); r != nil {
			out = append(out, *r)
		}
	}
	if len(s.pools) == 0 {
		out = append(out, Rejection{Constraint: ConstraintNoNodePool, Detail: "no NodePool is configured"})
	}
	return out
}

// noDomainDetail explains why no combination of topology domains is left for a new claim.
func (s *solver) noDomainDetail(st *classStep) string {
	for _, key := range st.topo.keys {
		domains, _ := s.topo.domainOptions(st.topo, key, s.topo.domainsOf(key))
		if len(domains) == 0 {
			if key == LabelZone {
				return "no zone satisfies the pod's topology spread or pod (anti-)affinity"
			}
			return fmt.Sprintf("no %s domain satisfies the pod's topology spread or pod (anti-)affinity", key)
		}
		if own := st.Requirements[key]; own != nil {
			allowed := slices.DeleteFunc(domains, func(d string) bool { return !own.Has(d) })
			if len(allowed) == 0 {
				return fmt.Sprintf("topology allows %s %v but the pod's node selection or volumes require %s", key, domains, own)
			}
		}
	}
	return "no domain satisfies the pod's topology spread or pod (anti-)affinity"
}
