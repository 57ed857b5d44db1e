package scheduling

import (
	"encoding/json"
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
// pods that own it: a topology spread constraint, or a required pod (anti-)affinity term. The key is
// hostname (each node or claim its own domain) or any label whose values the NodePools, instance types
// or existing nodes define (topologydomains.go).
type topoGroup struct {
	id         string
	kind       groupKind
	key        string
	namespaces map[string]bool
	// nsSelector, when set, also selects the namespaces whose labels (nsLabels) it matches.
	nsSelector labels.Selector
	nsLabels   map[string]labels.Set
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
	// anyDomain is set when some owner may use every domain; ownReqs are the owners' own requirements
	// on the key (nodeAffinityPolicy Honor).
	anyDomain bool
	ownReqs   []*Requirement
	// ignoreAffinity is nodeAffinityPolicy Ignore: the owners' node requirements do not narrow the
	// spread's domains. honorTaints is nodeTaintsPolicy Honor: only nodes and NodePools whose taints
	// tolerations tolerates count, and domains holds the domains they offer.
	ignoreAffinity bool
	honorTaints    bool
	tolerations    []corev1.Toleration
	domains        []string
	// levelFor and level cache spreadAllows' water level for one requirement on the key until counts
	// change.
	levelValid bool
	levelFor   *Requirement
	level      int
	// version counts changes to the group's state, so that decisions depending on it can be cached.
	version int
	// index is the group's position in topology.order.
	index int
}

// changed invalidates what was derived from the group's counts.
func (g *topoGroup) changed() {
	g.levelValid = false
	g.version++
}

func (g *topoGroup) matches(namespace string, l map[string]string) bool {
	if !g.namespaces[namespace] && (g.nsSelector == nil || !g.nsSelector.Matches(g.namespaceLabels(namespace))) {
		return false
	}
	return g.selector.Matches(labels.Set(l))
}

// namespaceLabels returns a namespace's labels; a namespace the input does not list has only the
// kubernetes.io/metadata.name label the API server gives every namespace.
func (g *topoGroup) namespaceLabels(namespace string) labels.Set {
	if l, ok := g.nsLabels[namespace]; ok {
		return l
	}
	return labels.Set{corev1.LabelMetadataName: namespace}
}

// counts reports whether pods on a node with these taints count for the group.
func (g *topoGroup) countsOn(taints []corev1.Taint) bool {
	return !g.honorTaints || Tolerates(g.tolerations, taints, false) == nil
}

// groupSpec is what identifies a topology group.
type groupSpec struct {
	kind                groupKind
	key                 string
	namespaces          map[string]bool
	nsSelector          labels.Selector
	selector            labels.Selector
	maxSkew, minDomains int
	preferred           bool
	ignoreAffinity      bool
	honorTaints         bool
	tolerations         []corev1.Toleration
}

// classTopology is what topology means for one pod class.
type classTopology struct {
	owned    []*topoGroup // groups the class's pods must satisfy
	inverse  []*topoGroup // anti-affinity groups of other pods whose selector matches the class
	matching []*topoGroup // every group whose selector matches the class, for counting
	// own are the pods' own node requirements (without their volumes'), for nodeAffinityPolicy Honor.
	own Requirements
	// keys are the topology keys other than hostname that owned or inverse groups constrain, sorted.
	keys []string
	// joined caches the last topology check of mayJoinCached.
	joined topoCheck
	// monotone is set when the rules only tighten as pods land: no pod affinity (which a matching pod
	// arriving can satisfy) and no spread the pods do not count toward (whose minimum can rise).
	monotone bool
	// hostBlocked counts the solver's first claims whose hostname rules refuse these pods (only
	// tracked when monotone).
	hostBlocked int
}

// topoCheck records a mayJoin topology verdict and the state it was reached under.
type topoCheck struct {
	epoch, stamp int
	ok           bool
}

// topology tracks all groups of a solve.
type topology struct {
	groups map[string]*topoGroup
	order  []*topoGroup
	// inNamespace indexes the groups that select pods of listed namespaces only, per namespace;
	// bySelector lists the groups with a namespaceSelector, which may select pods of any namespace.
	// Both keep t.order's order (see selecting).
	inNamespace map[string][]*topoGroup
	bySelector  []*topoGroup
	// source lists the domains a key can take (existing nodes, NodePools and their instance types)
	// with their cheapest prices; domains and prices cache it per key.
	source  func(key string) ([]string, map[string]float64)
	domains map[string][]string
	// prices holds the cheapest price of a new claim per domain, per key.
	prices map[string]map[string]float64
	// tolerated lists the domains of a key on nodes and NodePools whose taints tolerations tolerate
	// (nodeTaintsPolicy Honor).
	tolerated func(key string, tolerations []corev1.Toleration) []string
	// nsLabels are the namespaces' labels, for namespaceSelector.
	nsLabels map[string]labels.Set
	// interned holds the classTopology shared by classes with the same topology (classify).
	interned map[string]*classTopology
}

func newTopology(source func(key string) ([]string, map[string]float64)) *topology {
	return &topology{groups: map[string]*topoGroup{}, source: source, domains: map[string][]string{}, prices: map[string]map[string]float64{},
		interned: map[string]*classTopology{}, inNamespace: map[string][]*topoGroup{}}
}

// groupsFor builds (or finds) the groups a pod owns: its hard spread constraints and required pod
// (anti-)affinity terms, plus the preferences a relaxation step still treats as required. It returns an
// error for forms it cannot model.
func (t *topology) groupsFor(pod *corev1.Pod, soft softTerms) ([]*topoGroup, error) {
	specs, err := ownedSpecs(pod, soft)
	if err != nil {
		return nil, err
	}
	out := make([]*topoGroup, 0, len(specs))
	for _, spec := range specs {
		g, err := t.group(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	for _, g := range out {
		if g.matches(pod.Namespace, pod.Labels) {
			g.selfMatching = true
		}
	}
	return out, nil
}

// ownedSpecs are the specs of the groups groupsFor builds for a pod, in its order.
func ownedSpecs(pod *corev1.Pod, soft softTerms) ([]groupSpec, error) {
	var out []groupSpec
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
		spec := groupSpec{kind: kindSpread, key: tsc.TopologyKey, namespaces: map[string]bool{pod.Namespace: true}, selector: sel,
			maxSkew: int(tsc.MaxSkew), minDomains: minDomains, preferred: preferred,
			ignoreAffinity: tsc.NodeAffinityPolicy != nil && *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyIgnore}
		if tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
			spec.honorTaints, spec.tolerations = true, pod.Spec.Tolerations
		}
		out = append(out, spec)
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
			sel, err := selectorFor(term.LabelSelector, nil, nil)
			if err != nil {
				return nil, err
			}
			ns := map[string]bool{}
			for _, n := range term.Namespaces {
				ns[n] = true
			}
			var nsSel labels.Selector
			if term.NamespaceSelector != nil {
				// An empty selector selects every namespace.
				if nsSel, err = metav1.LabelSelectorAsSelector(term.NamespaceSelector); err != nil {
					return nil, fmt.Errorf("invalid namespaceSelector: %w", err)
				}
			} else if len(ns) == 0 {
				ns[pod.Namespace] = true
			}
			out = append(out, groupSpec{kind: set.kind, key: term.TopologyKey, namespaces: ns, nsSelector: nsSel, selector: sel, preferred: i < set.preferred})
		}
	}
	return out, nil
}

// id is what identifies the group of spec in a topology.
func (spec groupSpec) id() string {
	id := fmt.Sprintf("%s|%s|%s|%s|%d|%d|%t", spec.kind, NormalizeLabel(spec.key), strings.Join(sortedKeys(spec.namespaces), ","), spec.selector.String(), spec.maxSkew, spec.minDomains, spec.preferred)
	if spec.nsSelector != nil {
		id += "|ns=" + spec.nsSelector.String()
	}
	if spec.ignoreAffinity {
		id += "|affinity=ignore"
	}
	if spec.honorTaints {
		data, _ := json.Marshal(spec.tolerations)
		id += "|taints=" + string(data)
	}
	return id
}

func (t *topology) group(spec groupSpec) (*topoGroup, error) {
	key := NormalizeLabel(spec.key)
	if key != LabelZone && key != LabelHostname && len(t.domainsOf(key)) == 0 {
		return nil, fmt.Errorf("pod %s on topology key %q is not supported: no NodePool, instance type or node defines values for it", spec.kind, key)
	}
	id := spec.id()
	if g, ok := t.groups[id]; ok {
		return g, nil
	}
	g := &topoGroup{id: id, kind: spec.kind, key: key, namespaces: spec.namespaces, nsSelector: spec.nsSelector, nsLabels: t.nsLabels,
		selector: spec.selector, maxSkew: spec.maxSkew, minDomains: spec.minDomains, preferred: spec.preferred,
		ignoreAffinity: spec.ignoreAffinity, honorTaints: spec.honorTaints, tolerations: spec.tolerations,
		counts: map[string]int{}, owners: map[string]int{}}
	if g.honorTaints && key != LabelHostname && t.tolerated != nil {
		g.domains = t.tolerated(key, g.tolerations)
	}
	g.index = len(t.order)
	t.groups[id] = g
	t.order = append(t.order, g)
	if g.nsSelector != nil {
		t.bySelector = append(t.bySelector, g)
	} else {
		for ns := range g.namespaces {
			t.inNamespace[ns] = append(t.inNamespace[ns], g)
		}
	}
	return g, nil
}

// selecting returns the groups that select a pod of namespace with labels l, in t.order. Only the
// groups that can select the namespace are tried: a cluster's groups are mostly one workload's spread
// or affinity in its own namespace, and every class of pods is matched against them in every solve.
func (t *topology) selecting(namespace string, l map[string]string) []*topoGroup {
	var out []*topoGroup
	listed, any := t.inNamespace[namespace], t.bySelector
	for len(listed) > 0 || len(any) > 0 {
		var g *topoGroup
		if len(any) == 0 || (len(listed) > 0 && listed[0].index < any[0].index) {
			g, listed = listed[0], listed[1:]
		} else {
			g, any = any[0], any[1:]
		}
		if g.matches(namespace, l) {
			out = append(out, g)
		}
	}
	return out
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
	matching := t.selecting(pod.Namespace, pod.Labels)
	for i := range c.steps {
		if len(owned[i]) == 0 && len(matching) == 0 {
			continue
		}
		// Classes with the same groups and the same own requirements on their keys share one
		// classTopology, so that checks cached on it (mayJoinCached) serve them all.
		key := internKey(owned[i], matching, c.steps[i].own)
		if ct, ok := t.interned[key]; ok {
			c.steps[i].topo = ct
			continue
		}
		ct := &classTopology{owned: owned[i], matching: matching}
		for _, g := range matching {
			if g.kind == kindAntiAffinity && !g.preferred && !slices.Contains(owned[i], g) {
				ct.inverse = append(ct.inverse, g)
			}
		}
		ct.own = c.steps[i].own
		for _, g := range owned[i] {
			if r := ct.own[g.key]; r == nil || g.ignoreAffinity {
				g.anyDomain = true
			} else {
				g.ownReqs = append(g.ownReqs, r)
			}
		}
		ct.keys = constrainedKeys(ct)
		ct.monotone = true
		for _, g := range ct.owned {
			if g.kind == kindAffinity || (g.kind == kindSpread && !slices.Contains(matching, g)) {
				ct.monotone = false
			}
		}
		t.interned[key] = ct
		c.steps[i].topo = ct
	}
}

// internKey identifies a classTopology: its owned and matching groups, and the own requirements on
// the owned groups' keys.
func internKey(owned, matching []*topoGroup, own Requirements) string {
	var b strings.Builder
	for _, g := range owned {
		fmt.Fprintf(&b, "%d,", g.index)
	}
	b.WriteByte('|')
	for _, g := range matching {
		fmt.Fprintf(&b, "%d,", g.index)
	}
	for _, g := range owned {
		b.WriteByte('|')
		if r := own[g.key]; r != nil {
			b.WriteString(r.String())
		}
	}
	return b.String()
}
