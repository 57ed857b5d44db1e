package scheduling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// groupKind is the kind of pod-placement rule a topology group enforces.
type groupKind string

const (
	kindSpread       groupKind = "spread"
	kindAffinity     groupKind = "affinity"
	kindAntiAffinity groupKind = "anti-affinity"
)

// topoGroup counts, per domain of one topology key, the pods matching a selector, and constrains the
// pods that own it: a topology spread constraint, or a required pod (anti-)affinity term. Only the zone
// and hostname keys are supported.
type topoGroup struct {
	id         string
	kind       groupKind
	key        string
	namespaces map[string]bool
	selector   labels.Selector
	maxSkew    int
	minDomains int
	// counts holds matching pods per domain; owners holds pods owning the group per domain (for the
	// inverse of anti-affinity: pods matching the selector may not join an owner's domain).
	counts, owners map[string]int
	total          int
	// pending counts the matching pods of this solve not yet placed or failed.
	pending      int
	selfMatching bool
	// preferred marks a preference treated as required until relaxed; only required anti-affinity
	// keeps other pods away (inverse anti-affinity).
	preferred bool
	// anyZone is set when some owner may use every zone; zoneReqs are the owners' zone requirements.
	anyZone  bool
	zoneReqs []*Requirement
	// levelFor and level cache spreadAllows' water level for one zone requirement until counts change.
	levelValid bool
	levelFor   *Requirement
	level      int
}

func (g *topoGroup) matches(namespace string, l map[string]string) bool {
	return g.namespaces[namespace] && g.selector.Matches(labels.Set(l))
}

// classTopology is what topology means for one pod class.
type classTopology struct {
	owned    []*topoGroup // groups the class's pods must satisfy
	inverse  []*topoGroup // anti-affinity groups of other pods whose selector matches the class
	matching []*topoGroup // every group whose selector matches the class, for counting
	zoneReq  *Requirement // the pods' own zone requirement, for nodeAffinityPolicy=Honor
}

func (ct *classTopology) constrains(key string) bool {
	for _, g := range ct.owned {
		if g.key == key {
			return true
		}
	}
	for _, g := range ct.inverse {
		if g.key == key {
			return true
		}
	}
	return false
}

// topology tracks all groups of a solve.
type topology struct {
	groups map[string]*topoGroup
	order  []*topoGroup
	zones  []string // every zone a pod could land in: existing nodes and available offerings
}

func newTopology() *topology { return &topology{groups: map[string]*topoGroup{}} }

// groupsFor builds (or finds) the groups a pod owns: its hard spread constraints and required pod
// (anti-)affinity terms, plus the preferences a relaxation step still treats as required. It returns an
// error for forms it cannot model.
func (t *topology) groupsFor(pod *corev1.Pod, soft softTerms) ([]*topoGroup, error) {
	var out []*topoGroup
	spread := slices.Clone(soft.spread)
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable != corev1.ScheduleAnyway {
			spread = append(spread, tsc)
		}
	}
	for i, tsc := range spread {
		preferred := i < len(soft.spread)
		sel, err := spreadSelector(pod, tsc)
		if err != nil {
			return nil, err
		}
		minDomains := 0
		if tsc.MinDomains != nil {
			minDomains = int(*tsc.MinDomains)
		}
		g, err := t.group(kindSpread, tsc.TopologyKey, map[string]bool{pod.Namespace: true}, sel, int(tsc.MaxSkew), minDomains, preferred)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	affinity, anti := slices.Clone(soft.affinity), slices.Clone(soft.antiAffinity)
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			affinity = append(affinity, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
		if a.PodAntiAffinity != nil {
			anti = append(anti, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		}
	}
	for _, set := range []struct {
		kind      groupKind
		terms     []corev1.PodAffinityTerm
		preferred int // the first preferred terms are preferences
	}{{kindAffinity, affinity, len(soft.affinity)}, {kindAntiAffinity, anti, len(soft.antiAffinity)}} {
		for i, term := range set.terms {
			if term.NamespaceSelector != nil {
				return nil, fmt.Errorf("pod %s with namespaceSelector is not supported yet", set.kind)
			}
			sel, err := selectorFor(term.LabelSelector, nil, nil)
			if err != nil {
				return nil, err
			}
			ns := map[string]bool{}
			for _, n := range term.Namespaces {
				ns[n] = true
			}
			if len(ns) == 0 {
				ns[pod.Namespace] = true
			}
			g, err := t.group(set.kind, term.TopologyKey, ns, sel, 0, 0, i < set.preferred)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
	}
	for _, g := range out {
		if g.matches(pod.Namespace, pod.Labels) {
			g.selfMatching = true
		}
	}
	return out, nil
}

func (t *topology) group(kind groupKind, key string, ns map[string]bool, sel labels.Selector, maxSkew, minDomains int, preferred bool) (*topoGroup, error) {
	key = NormalizeLabel(key)
	if key != LabelZone && key != LabelHostname {
		return nil, fmt.Errorf("pod %s on topology key %q is not supported yet (zone and hostname are)", kind, key)
	}
	id := fmt.Sprintf("%s|%s|%s|%s|%d|%d|%t", kind, key, strings.Join(sortedKeys(ns), ","), sel.String(), maxSkew, minDomains, preferred)
	if g, ok := t.groups[id]; ok {
		return g, nil
	}
	g := &topoGroup{id: id, kind: kind, key: key, namespaces: ns, selector: sel, maxSkew: maxSkew, minDomains: minDomains, preferred: preferred, counts: map[string]int{}, owners: map[string]int{}}
	t.groups[id] = g
	t.order = append(t.order, g)
	return g, nil
}

func spreadSelector(pod *corev1.Pod, tsc corev1.TopologySpreadConstraint) (labels.Selector, error) {
	return selectorFor(tsc.LabelSelector, tsc.MatchLabelKeys, pod.Labels)
}

// selectorFor converts a label selector, adding key=value requirements for matchLabelKeys.
func selectorFor(ls *metav1.LabelSelector, matchLabelKeys []string, podLabels map[string]string) (labels.Selector, error) {
	if ls == nil {
		return labels.Nothing(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("invalid label selector: %w", err)
	}
	for _, k := range matchLabelKeys {
		v, ok := podLabels[k]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, fmt.Errorf("invalid matchLabelKeys: %w", err)
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// classify sets each relaxation step's topology: the groups it owns, and the groups that select the
// class (for counting, and for the inverse of other pods' anti-affinity).
func (t *topology) classify(c *podClass, owned [][]*topoGroup) {
	pod := c.pods[0]
	var matching []*topoGroup
	for _, g := range t.order {
		if g.matches(pod.Namespace, pod.Labels) {
			matching = append(matching, g)
		}
	}
	for i := range c.steps {
		ct := &classTopology{owned: owned[i], matching: matching}
		for _, g := range matching {
			if g.kind == kindAntiAffinity && !g.preferred && !slices.Contains(owned[i], g) {
				ct.inverse = append(ct.inverse, g)
			}
		}
		if z, ok := c.steps[i].Requirements[LabelZone]; ok {
			ct.zoneReq = z
		}
		for _, g := range owned[i] {
			if ct.zoneReq == nil {
				g.anyZone = true
			} else {
				g.zoneReqs = append(g.zoneReqs, ct.zoneReq)
			}
		}
		if len(ct.owned) > 0 || len(ct.inverse) > 0 || len(ct.matching) > 0 {
			c.steps[i].topo = ct
		}
	}
}

// zoneOptions returns the zones among candidates a pod with topology ct may go to, best first (fewest
// matching pods in its spread groups, then name), and restricted=false when c has no zone rule.
func (t *topology) zoneOptions(ct *classTopology, candidates []string) (zones []string, restricted bool) {
	if ct == nil || !ct.constrains(LabelZone) {
		return nil, false
	}
	for _, z := range candidates {
		if t.zoneAllowed(ct, z) {
			zones = append(zones, z)
		}
	}
	score := func(z string) int {
		n := 0
		for _, g := range ct.owned {
			if g.key == LabelZone && g.kind == kindSpread {
				n += g.counts[z]
			}
		}
		return n
	}
	slices.SortStableFunc(zones, func(a, b string) int { return cmp.Or(cmp.Compare(score(a), score(b)), cmp.Compare(a, b)) })
	return zones, true
}

func (t *topology) zoneAllowed(ct *classTopology, z string) bool {
	for _, g := range ct.owned {
		if g.key != LabelZone {
			continue
		}
		switch g.kind {
		case kindSpread:
			if !t.spreadAllows(g, ct, z) {
				return false
			}
		case kindAntiAffinity:
			if g.counts[z] > 0 {
				return false
			}
		case kindAffinity:
			if g.total > 0 && g.counts[z] == 0 {
				return false
			}
			if g.total == 0 && !g.selfMatching {
				return false
			}
		}
	}
	for _, g := range ct.inverse {
		if g.key == LabelZone && g.owners[z] > 0 {
			return false
		}
	}
	return true
}

// spreadAllows decides whether zone z may take one more pod of a zone spread group. Rather than
// checking the skew after every single pod (which forces packing to alternate zones pod by pod), it
// checks against the balanced final distribution: all matching pods of this solve, placed or pending,
// are spread over the eligible zones by water-filling on top of the pods already there, and z may take
// a pod while it is below its share. Once every pending pod is placed the counts are that balanced
// distribution, which satisfies any maxSkew ≥ 1 that the running pods allow; repairSpread undoes the
// excess when some pending pods could not be placed after all. Below minDomains eligible
// zones the global minimum counts as 0 and every zone is capped at maxSkew pods, as kube-scheduler does.
func (t *topology) spreadAllows(g *topoGroup, ct *classTopology, z string) bool {
	var eligible []int
	placed := 0
	for _, d := range t.zones {
		if ct.zoneReq != nil && !ct.zoneReq.Has(d) {
			continue
		}
		eligible = append(eligible, g.counts[d])
		placed += g.counts[d]
	}
	if len(eligible) == 0 || len(eligible) < g.minDomains {
		return g.counts[z]+1 <= g.maxSkew
	}
	if g.levelValid && g.levelFor == ct.zoneReq {
		return g.counts[z] < g.level
	}
	total := placed + g.pending
	// The level L is the smallest with Σ max(count, L) ≥ total; a zone's share is max(count, L).
	level := 0
	for lo, hi := 0, total; lo <= hi; {
		mid := (lo + hi) / 2
		sum := 0
		for _, c := range eligible {
			sum += max(c, mid)
		}
		if sum >= total {
			level, hi = mid, mid-1
		} else {
			lo = mid + 1
		}
	}
	g.levelValid, g.levelFor, g.level = true, ct.zoneReq, level
	return g.counts[z] < level
}

// hostAllowed reports whether a pod with topology ct may join the node (or claim) named host, which is new
// when it has no pods yet.
func (t *topology) hostAllowed(ct *classTopology, host string) bool {
	if ct == nil {
		return true
	}
	for _, g := range ct.owned {
		if g.key != LabelHostname {
			continue
		}
		switch g.kind {
		case kindSpread:
			if g.counts[host]+1 > g.maxSkew {
				return false
			}
		case kindAntiAffinity:
			if g.counts[host] > 0 {
				return false
			}
		case kindAffinity:
			if g.total > 0 && g.counts[host] == 0 {
				return false
			}
			if g.total == 0 && !g.selfMatching {
				return false
			}
		}
	}
	for _, g := range ct.inverse {
		if g.key == LabelHostname && g.owners[host] > 0 {
			return false
		}
	}
	return true
}

// record counts a placed pod in every group that selects it, and as an owner of its own groups. zone
// is "" when the node's zone is not decided yet.
func (t *topology) record(ct *classTopology, host, zone string) {
	if ct == nil {
		return
	}
	for _, g := range ct.matching {
		g.pending--
		g.levelValid = false
	}
	domain := func(g *topoGroup) string {
		if g.key == LabelHostname {
			return host
		}
		return zone
	}
	for _, g := range ct.matching {
		if d := domain(g); d != "" {
			g.counts[d]++
			g.total++
		}
	}
	for _, g := range ct.owned {
		if d := domain(g); d != "" {
			g.owners[d]++
		}
	}
}

// recordExisting counts a pod already bound to a node.
func (t *topology) recordExisting(pod *corev1.Pod, host, zone string) {
	owned, err := t.groupsFor(pod, softTerms{})
	if err != nil {
		owned = nil
	}
	ct := &classTopology{owned: owned}
	for _, g := range t.order {
		if g.matches(pod.Namespace, pod.Labels) {
			ct.matching = append(ct.matching, g)
		}
	}
	for _, g := range ct.matching {
		g.pending++ // a running pod was never pending; record takes it off again
		g.levelValid = false
	}
	t.record(ct, host, zone)
}

// forget takes failed pods of a class off the pending counts.
func (t *topology) forget(ct *classTopology, n int) {
	if ct == nil {
		return
	}
	for _, g := range ct.matching {
		g.pending -= n
		g.levelValid = false
	}
}

// eligibleZones are the zones some owner of the group may use (nodeAffinityPolicy Honor).
func (t *topology) eligibleZones(g *topoGroup) []string {
	if g.anyZone {
		return t.zones
	}
	var out []string
	for _, z := range t.zones {
		for _, r := range g.zoneReqs {
			if r.Has(z) {
				out = append(out, z)
				break
			}
		}
	}
	return out
}
