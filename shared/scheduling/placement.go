package scheduling

import (
	corev1 "k8s.io/api/core/v1"
)

// zoneStepKey identifies a relaxation step narrowed to one zone.
type zoneStepKey struct {
	step *classStep
	zone string
}

// setupTopology builds the topology groups of the pods to place and of the pods already running,
// classifies every class, and counts the running pods. Classes needing forms that are not modelled are
// marked invalid.
func (s *solver) setupTopology(classes []*podClass) {
	t := newTopology()
	s.topo, s.zoneSteps = t, map[zoneStepKey]*classStep{}
	owned := make([][][]*topoGroup, len(classes))
	for i, c := range classes {
		if c.invalid == nil {
			owned[i] = s.stepGroups(c)
		}
	}
	for _, n := range s.in.Nodes {
		for _, p := range n.Pods {
			_, _ = t.groupsFor(p, softTerms{})
		}
	}
	if len(t.order) == 0 {
		return
	}
	zones := map[string]bool{}
	for _, slot := range s.slots {
		if z := slotZone(slot); z != "" {
			zones[z] = true
		}
	}
	for _, ps := range s.pools {
		for _, c := range ps.candidates {
			for _, o := range c.it.Offerings {
				if c.it.compatibleOffering(&o, ps.reqs, ps.unavailable) {
					zones[o.Zone] = true
				}
			}
		}
	}
	t.zones = sortedKeys(zones)
	for i, c := range classes {
		if c.invalid == nil {
			t.classify(c, owned[i])
			if ct := c.steps[0].topo; ct != nil {
				for _, g := range ct.matching {
					g.pending += len(c.pods)
					g.levelValid = false
				}
			}
		}
	}
	for _, n := range s.in.Nodes {
		zone := n.Node.Labels[LabelZone]
		for _, p := range n.Pods {
			if !isTerminal(p) {
				t.recordExisting(p, n.Node.Name, zone)
			}
		}
	}
	for _, c := range s.in.InFlight {
		for _, p := range c.Pods {
			t.recordExisting(p, c.Name, c.Labels[LabelZone])
		}
	}
}

// stepGroups builds the topology groups of each relaxation step of a class. A step whose preferences
// cannot be modelled is dropped (as if already relaxed); if the pod's hard rules cannot be modelled
// the class is marked unsupported.
func (s *solver) stepGroups(c *podClass) [][]*topoGroup {
	var steps []classStep
	var owned [][]*topoGroup
	var firstErr error
	for _, st := range c.steps {
		groups, err := s.topo.groupsFor(c.pods[0], st.soft)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		steps = append(steps, st)
		owned = append(owned, groups)
	}
	if len(steps) == 0 {
		c.invalid = &Rejection{Constraint: ConstraintUnsupported, Detail: firstErr.Error()}
		return nil
	}
	c.steps = steps
	return owned
}

func slotZone(slot *nodeSlot) string {
	if z, ok := slot.reqs[LabelZone]; ok && z.Count() == 1 {
		return z.Any()
	}
	return ""
}

func claimZone(cl *claim) string {
	if z, ok := cl.reqs[LabelZone]; ok && z.Count() == 1 {
		return z.Any()
	}
	return ""
}

// slotAllows checks topology for a pod at step st on an existing node.
func (s *solver) slotAllows(st *classStep, slot *nodeSlot) bool {
	if st.topo == nil {
		return true
	}
	if zones, restricted := s.topo.zoneOptions(st.topo, []string{slotZone(slot)}); restricted && len(zones) == 0 {
		return false
	}
	return s.topo.hostAllowed(st.topo, slot.name)
}

func (s *solver) addToSlot(slot *nodeSlot, c *podClass, st *classStep, pod *corev1.Pod) {
	slot.add(c, pod)
	s.topo.record(st.topo, slot.name, slotZone(slot))
}

// tryClaim adds a pod to an open claim if topology allows it, narrowing the claim to the best zone
// when the pod has a zone rule.
func (s *solver) tryClaim(cl *claim, c *podClass, st *classStep, pod *corev1.Pod) bool {
	if !cl.requests.Add(c.requests).Fits(cl.roomiest) {
		return false
	}
	if st.topo != nil {
		if !s.topo.hostAllowed(st.topo, cl.host) {
			return false
		}
		var candidates []string
		allowed := cl.reqs.Get(LabelZone)
		for _, z := range s.topo.zones {
			if allowed.Has(z) {
				candidates = append(candidates, z)
			}
		}
		if zones, restricted := s.topo.zoneOptions(st.topo, candidates); restricted {
			if len(zones) == 0 {
				return false
			}
			st = s.zoneStep(st, zones[0])
		}
	}
	if !cl.tryAdd(c, st, pod, s.demand, s.strict) {
		return false
	}
	s.topo.record(st.topo, cl.host, claimZone(cl))
	return true
}

// newClaimSteps returns the steps to try when opening a claim: st itself, or, for a step with a zone
// rule, st narrowed to each allowed zone in order of preference. It is empty when no zone is allowed
// or a hostname affinity rules out new nodes.
func (s *solver) newClaimSteps(st *classStep) []*classStep {
	if st.topo == nil {
		return []*classStep{st}
	}
	if !s.topo.hostAllowed(st.topo, "") {
		return nil
	}
	zones, restricted := s.topo.zoneOptions(st.topo, s.topo.zones)
	if !restricted {
		return []*classStep{st}
	}
	out := make([]*classStep, 0, len(zones))
	for _, z := range zones {
		out = append(out, s.zoneStep(st, z))
	}
	return out
}

// zoneStep returns st with its requirements narrowed to one zone.
func (s *solver) zoneStep(st *classStep, zone string) *classStep {
	k := zoneStepKey{st, zone}
	if z, ok := s.zoneSteps[k]; ok {
		return z
	}
	reqs := st.Requirements.Intersection(NewRequirements(&Requirement{Key: LabelZone, values: []string{zone}}))
	z := &classStep{Attempt: Attempt{Requirements: reqs, TolerateAllPreferNoSchedule: st.TolerateAllPreferNoSchedule, Relaxed: st.Relaxed}, sig: st.base + "|zone=" + zone, base: st.base, soft: st.soft, topo: st.topo}
	s.zoneSteps[k] = z
	return z
}

// mayJoin is a cheap pre-check of whether a pod of class k could join claim cl: pool taints, and the
// hostname and (for a claim already in one zone) zone rules of topology.
func (s *solver) mayJoin(cl *claim, k *podClass, zone string) bool {
	st := &k.steps[k.step]
	if cl.pool.tolerates(k, st) != nil {
		return false
	}
	ct := st.topo
	if ct == nil {
		return true
	}
	if !s.topo.hostAllowed(ct, cl.host) {
		return false
	}
	return zone == "" || !ct.constrains(LabelZone) || s.topo.zoneAllowed(ct, zone)
}
