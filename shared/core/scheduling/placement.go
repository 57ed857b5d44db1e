package scheduling

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// narrowKey identifies a relaxation step narrowed to one domain of a topology key.
type narrowKey struct {
	step       *classStep
	key, value string
}

// maxNarrowedSteps bounds the combinations of domains newClaimSteps tries for a pod with rules on
// several topology keys.
const maxNarrowedSteps = 64

// setupTopology builds the topology groups of the pods to place and of the pods already running,
// classifies every class, and counts the running pods. Classes needing forms that are not modelled are
// marked invalid.
func (s *solver) setupTopology(classes []*podClass) {
	t := newTopology(s.domainSource)
	t.tolerated, t.nsLabels = s.toleratedDomains, namespaceLabels(s.in.Namespaces)
	s.topo, s.narrowed = t, map[narrowKey]*classStep{}
	owned := make([][][]*topoGroup, len(classes))
	for i, c := range classes {
		if c.invalid == nil {
			owned[i] = s.stepGroups(c)
		}
	}
	views := s.views
	// ownedBy are the groups of each terms class of the views' pods (nil when they cannot be
	// modelled): pods of one class own the same groups, built once.
	var ownedBy map[int][]*topoGroup
	if views == nil {
		for _, n := range s.in.Nodes {
			for _, p := range n.Pods {
				_, _ = t.groupsFor(p, softTerms{})
			}
		}
	} else {
		// The same groups, in the same order: a pod without topology terms of its own makes none
		// (nodeView), and a pod of a class already seen makes none either.
		ownedBy = map[int][]*topoGroup{}
		for _, tp := range s.existing.firstOfEachTerms() { // views come with the index (Prepared.Solve)
			ownedBy[tp.class] = t.ownedGroups(tp.pod)
		}
	}
	if len(t.order) == 0 {
		return
	}
	for i, c := range classes {
		if c.invalid == nil {
			t.classify(c, owned[i])
			if ct := c.steps[0].topo; ct != nil {
				for _, g := range ct.matching {
					g.pending += len(c.pods)
					g.changed()
				}
			}
		}
	}
	switch {
	case views == nil:
		for _, n := range s.in.Nodes {
			reqs := RequirementsFromLabels(n.Node.Labels)
			for _, p := range n.Pods {
				if !isTerminal(p) {
					t.recordExisting(p, n.Node.Name, reqs, n.Node.Spec.Taints)
				}
			}
		}
	case s.existing != nil && allModelled(ownedBy):
		// Every running pod's terms could be modelled (a class whose groupsFor failed owns nothing,
		// which the index does not know): the index's counts, less the nodes left out.
		s.existing.fill(t)
	default:
		// Which groups select a pod depends only on its namespace and labels, and the groups do not
		// change while running pods are counted: pods of one label class share the answer.
		matching := map[int][]*topoGroup{}
		for i, n := range s.in.Nodes {
			v := views[i]
			for j, p := range v.live {
				m, ok := matching[v.class[j]]
				if !ok {
					m = t.matchingGroups(p)
					matching[v.class[j]] = m
				}
				var owned []*topoGroup
				if tc := v.liveTerms[j]; tc >= 0 { // groupsFor gives the others no group
					owned = ownedBy[tc]
				}
				t.recordExistingMatching(p, n.Node.Name, v.reqs, n.Node.Spec.Taints, m, owned)
			}
		}
	}
	for _, c := range s.in.InFlight {
		reqs := RequirementsFromLabels(c.Labels)
		for _, p := range c.Pods {
			t.recordExisting(p, c.Name, reqs, c.Taints)
		}
	}
}

// allModelled reports whether every terms class's groups could be built.
func allModelled(ownedBy map[int][]*topoGroup) bool {
	for _, groups := range ownedBy {
		if groups == nil {
			return false
		}
	}
	return true
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

// slotAllows checks topology for a pod at step st on an existing node.
func (s *solver) slotAllows(st *classStep, slot *nodeSlot) bool {
	ct := st.topo
	if ct == nil {
		return true
	}
	for _, key := range ct.keys {
		d := singleValue(slot.reqs, key)
		if d == "" && ct.needsDomain(key) {
			return false // as in kube-scheduler, a node without the key is in no domain
		}
		if !s.topo.domainAllowed(ct, key, d) {
			return false
		}
	}
	return s.topo.hostAllowed(ct, slot.name)
}

// noSlotAllows reports whether slotAllows refuses st on every slot now: for some key of st's topology,
// no domain that a slot is in (nor being in none) is allowed. Then a scan of the slots can only fail,
// and its cost, every slot for every pod of a class whose topology rules restart the scan at the first
// slot, is spared: at 5,000 nodes, spread pods whose skew no existing node can meet (every node in one
// zone) made that scan most of a disruption decision. Domains are judged at the topology's current
// counts, as slotAllows would judge them during the scan (nothing changes until a pod lands).
func (s *solver) noSlotAllows(st *classStep) bool {
	ct := st.topo
	if ct == nil || len(s.slots) == 0 {
		return false
	}
	for _, key := range ct.keys {
		allowed := false
		for _, d := range s.domainsOfSlots(key) {
			if (d != "" || !ct.needsDomain(key)) && s.topo.domainAllowed(ct, key, d) {
				allowed = true
				break
			}
		}
		if !allowed {
			return true
		}
	}
	return false
}

// domainsOfSlots returns the distinct domains of key among the slots ("" for a slot in none), in the
// order the slots first have them (in a Prepared solve, the order the Prepared's slots do; only
// whether some domain is allowed is asked of them).
func (s *solver) domainsOfSlots(key string) []string {
	if ds, ok := s.slotDomains[key]; ok {
		return ds
	}
	if s.slotDomains == nil {
		s.slotDomains = map[string][]string{}
	}
	if s.domains != nil {
		ds := s.domains.slotDomains(key)
		s.slotDomains[key] = ds
		return ds
	}
	var ds []string
	seen := map[string]bool{}
	for _, slot := range s.slots {
		if d := singleValue(slot.reqs, key); !seen[d] {
			seen[d] = true
			ds = append(ds, d)
		}
	}
	s.slotDomains[key] = ds
	return ds
}

func (s *solver) addToSlot(slot *nodeSlot, c *podClass, st *classStep, pod *corev1.Pod) {
	slot.add(c, pod)
	s.topo.record(st.topo, slot.name, slot.reqs, slot.taints)
}

// tryClaim adds a pod to an open claim if topology allows it, narrowing the claim to the best domain
// of each key the pod has a rule on.
func (s *solver) tryClaim(cl *claim, c *podClass, st *classStep, pod *corev1.Pod) bool {
	if !cl.requests.fitsWith(c.requests, cl.roomiest) {
		return false
	}
	if ct := st.topo; ct != nil {
		if !s.topo.hostAllowed(ct, cl.host) {
			return false
		}
		for _, key := range ct.keys {
			var candidates []string
			allowed := cl.reqs.Get(key)
			for _, d := range s.topo.domainsOf(key) {
				if allowed.Has(d) {
					candidates = append(candidates, d)
				}
			}
			domains, _ := s.topo.domainOptions(ct, key, candidates)
			if len(domains) == 0 {
				return false
			}
			st = s.narrowStep(st, key, domains[0])
		}
	}
	if !cl.tryAdd(c, st, pod, s.demand, s.strict) {
		return false
	}
	s.topo.record(st.topo, cl.host, cl.reqs, cl.pool.Taints)
	return true
}

// newClaimSteps returns the steps to try when opening a claim: st itself, or, for a step with rules
// on topology keys other than hostname, st narrowed to each allowed combination of their domains in
// order of preference. It is empty when no domain is allowed or a hostname affinity rules out new
// nodes.
func (s *solver) newClaimSteps(st *classStep) []*classStep {
	ct := st.topo
	if ct == nil {
		return []*classStep{st}
	}
	if !s.topo.hostAllowed(ct, "") {
		return nil
	}
	steps := []*classStep{st}
	for _, key := range ct.keys {
		domains, _ := s.topo.domainOptions(ct, key, s.topo.domainsOf(key))
		next := make([]*classStep, 0, len(steps)*len(domains))
		for _, x := range steps {
			own := x.Requirements[key] // the pod's or its volumes' values
			for _, d := range domains {
				if own != nil && !own.Has(d) {
					continue
				}
				if len(next) < maxNarrowedSteps {
					next = append(next, s.narrowStep(x, key, d))
				}
			}
		}
		steps = next
	}
	return steps
}

// narrowStep returns st with its requirements narrowed to one value of key.
func (s *solver) narrowStep(st *classStep, key, value string) *classStep {
	k := narrowKey{st, key, value}
	if z, ok := s.narrowed[k]; ok {
		return z
	}
	reqs := st.Requirements.Intersection(NewRequirements(&Requirement{Key: key, values: []string{value}}))
	z := &classStep{Attempt: Attempt{Requirements: reqs, TolerateAllPreferNoSchedule: st.TolerateAllPreferNoSchedule, Relaxed: st.Relaxed},
		sig: st.sig + "|" + key + "=" + value, base: st.base, soft: st.soft, topo: st.topo, own: st.own}
	s.narrowed[k] = z
	return z
}

// topoJoins reports whether the hostname rules of topology ct, and its rules on the keys the claim is
// already narrowed on, let a pod join claim cl.
func (s *solver) topoJoins(cl *claim, ct *classTopology) bool {
	if !s.topo.hostAllowed(ct, cl.host) {
		return false
	}
	for _, key := range ct.keys {
		if d := singleValue(cl.reqs, key); d != "" && !s.topo.domainAllowed(ct, key, d) {
			return false
		}
	}
	return true
}

// namespaceLabels indexes the namespaces' labels by name, each with the kubernetes.io/metadata.name
// label the API server sets.
func namespaceLabels(namespaces []*corev1.Namespace) map[string]labels.Set {
	out := make(map[string]labels.Set, len(namespaces))
	for _, ns := range namespaces {
		l := labels.Set{corev1.LabelMetadataName: ns.Name}
		for k, v := range ns.Labels {
			l[k] = v
		}
		out[ns.Name] = l
	}
	return out
}
