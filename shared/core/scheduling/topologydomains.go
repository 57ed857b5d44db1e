package scheduling

import (
	"cmp"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// domainsOf returns the values key can take on a node a pod could land on, sorted: the labels of
// existing nodes and in-flight claims, and for new claims the values the NodePools and their instance
// types allow (the zones and capacity types of available offerings; other keys from requirements and
// labels with a finite set of values). A key with no values here cannot be used as a topology key.
func (t *topology) domainsOf(key string) []string {
	if d, ok := t.domains[key]; ok {
		return d
	}
	var d []string
	var prices map[string]float64
	if t.source != nil {
		d, prices = t.source(key)
	}
	t.domains[key], t.prices[key] = d, prices
	return d
}

// domainSource lists the domains of key over the solver's existing slots and NodePools, with the
// cheapest price a new claim pays in each (+Inf where only existing nodes have it).
func (s *solver) domainSource(key string) ([]string, map[string]float64) {
	return s.domainValues(key, nil)
}

// domainValues lists the domains of key with their cheapest prices over the existing slots and
// NodePools whose taints admit accepts (all when admit is nil).
func (s *solver) domainValues(key string, admit func([]corev1.Taint) bool) ([]string, map[string]float64) {
	prices := map[string]float64{}
	note := func(v string, price float64) {
		if p, ok := prices[v]; !ok || price < p {
			prices[v] = price
		}
	}
	if admit == nil && s.domains != nil && s.res == nil {
		// A Prepared solve without reservations: its pools are the templates' (see preparedDomains).
		return s.domains.values(key)
	}
	for _, slot := range s.slots {
		if admit != nil && !admit(slot.taints) {
			continue
		}
		if v := singleValue(slot.reqs, key); v != "" {
			note(v, math.Inf(1))
		}
	}
	poolDomainPrices(s.pools, key, admit, note)
	return sortedKeys(prices), prices
}

// groupDomains are the domains a spread group is balanced over: those of its key, or with
// nodeTaintsPolicy Honor those on nodes and NodePools whose taints its owners tolerate.
func (t *topology) groupDomains(g *topoGroup) []string {
	if g.honorTaints && t.tolerated != nil {
		return g.domains
	}
	return t.domainsOf(g.key)
}

// toleratedDomains lists the domains of key on existing nodes and NodePools whose taints tolerations
// tolerate (nodeTaintsPolicy Honor).
func (s *solver) toleratedDomains(key string, tolerations []corev1.Toleration) []string {
	values, _ := s.domainValues(key, func(taints []corev1.Taint) bool { return Tolerates(tolerations, taints, false) == nil })
	return values
}

// singleValue returns the one value reqs allow for key, or "" when they allow none or several.
func singleValue(reqs Requirements, key string) string {
	if r, ok := reqs[key]; ok && r.Count() == 1 {
		return r.Any()
	}
	return ""
}

// constrainedKeys lists the keys other than hostname that ct's owned or inverse groups constrain,
// sorted.
func constrainedKeys(ct *classTopology) []string {
	var keys []string
	for _, set := range [][]*topoGroup{ct.owned, ct.inverse} {
		for _, g := range set {
			if g.key != LabelHostname && !slices.Contains(keys, g.key) {
				keys = append(keys, g.key)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func (ct *classTopology) constrains(key string) bool {
	if key != LabelHostname {
		return slices.Contains(ct.keys, key)
	}
	for _, set := range [][]*topoGroup{ct.owned, ct.inverse} {
		for _, g := range set {
			if g.key == key {
				return true
			}
		}
	}
	return false
}

// needsDomain reports whether ct's pods must be in some domain of key: they own a spread constraint
// or a pod affinity term on it (anti-affinity is met by a node without the key).
func (ct *classTopology) needsDomain(key string) bool {
	for _, g := range ct.owned {
		if g.key == key && g.kind != kindAntiAffinity {
			return true
		}
	}
	return false
}

// domainOptions returns the domains of key among candidates a pod with topology ct may go to, best
// first (fewest matching pods in its spread groups, then for keys other than zone the cheapest, then
// name), and restricted=false when ct has no rule on key.
func (t *topology) domainOptions(ct *classTopology, key string, candidates []string) (domains []string, restricted bool) {
	if ct == nil || !ct.constrains(key) {
		return nil, false
	}
	for _, d := range candidates {
		if t.domainAllowed(ct, key, d) {
			domains = append(domains, d)
		}
	}
	score := func(d string) int {
		n := 0
		for _, g := range ct.owned {
			if g.key == key && g.kind == kindSpread {
				n += g.counts[d]
			}
		}
		return n
	}
	price := func(string) float64 { return 0 }
	if key != LabelZone && key != LabelZoneID {
		// Zones usually price alike; other keys (capacity type, instance family) do not.
		prices := t.prices[key]
		price = func(d string) float64 { return prices[d] }
	}
	slices.SortStableFunc(domains, func(a, b string) int {
		return cmp.Or(cmp.Compare(score(a), score(b)), cmp.Compare(price(a), price(b)), cmp.Compare(a, b))
	})
	return domains, true
}

// domainAllowed reports whether a pod with topology ct may go to domain d of key.
func (t *topology) domainAllowed(ct *classTopology, key, d string) bool {
	for _, g := range ct.owned {
		if g.key != key {
			continue
		}
		switch g.kind {
		case kindSpread:
			if !t.spreadAllows(g, ct, d) {
				return false
			}
		case kindAntiAffinity:
			if g.counts[d] > 0 {
				return false
			}
		case kindAffinity:
			if g.total > 0 && g.counts[d] == 0 {
				return false
			}
			if g.total == 0 && !g.selfMatching {
				return false
			}
		}
	}
	for _, g := range ct.inverse {
		if g.key == key && g.owners[d] > 0 {
			return false
		}
	}
	return true
}

// spreadAllows decides whether domain d may take one more pod of a spread group (on any key but
// hostname). Rather than checking the skew after every single pod (which forces packing to alternate
// zones pod by pod), it checks against the balanced final distribution: all matching pods of this
// solve, placed or pending, are spread over the eligible domains by water-filling on top of the pods
// already there, and d may take a pod while it is below its share. Once every pending pod is placed the
// counts are that balanced distribution, which satisfies any maxSkew ≥ 1 that the running pods allow;
// repairSpread undoes the excess when some pending pods could not be placed after all. Below
// minDomains eligible domains the global minimum counts as 0 and every domain is capped at maxSkew
// pods, as kube-scheduler does.
func (t *topology) spreadAllows(g *topoGroup, ct *classTopology, d string) bool {
	return t.spreadRoom(g, ct, d) > 0
}

// spreadRoom returns how many more pods of topology ct spread group g lets domain d take under
// spreadAllows' rule (math.MaxInt when the pods do not count toward the group and d is within
// maxSkew).
func (t *topology) spreadRoom(g *topoGroup, ct *classTopology, d string) int {
	own := ct.own[g.key]
	if g.ignoreAffinity {
		own = nil
	}
	var eligible []int
	placed := 0
	for _, x := range t.groupDomains(g) {
		if own != nil && !own.Has(x) {
			continue
		}
		eligible = append(eligible, g.counts[x])
		placed += g.counts[x]
	}
	if !slices.Contains(ct.matching, g) {
		// The pod does not count toward its own constraint: kube-scheduler only asks that d is not
		// already more than maxSkew above the least-filled domain.
		least := 0
		for i, c := range eligible {
			if i == 0 || c < least {
				least = c
			}
		}
		if len(eligible) < g.minDomains {
			least = 0
		}
		if g.counts[d]-least <= g.maxSkew {
			return math.MaxInt
		}
		return 0
	}
	if len(eligible) == 0 || len(eligible) < g.minDomains {
		return max(g.maxSkew-g.counts[d], 0)
	}
	if g.levelValid && g.levelFor == own {
		return max(g.level-g.counts[d], 0)
	}
	total := placed + g.pending
	// The level L is the smallest with Σ max(count, L) ≥ total; a domain's share is max(count, L).
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
	g.levelValid, g.levelFor, g.level = true, own, level
	return max(level-g.counts[d], 0)
}

// domainRoom returns how many more pods of topology ct domain d of key may take: 0 when
// domainAllowed refuses it, else the least room its spread groups on key leave (math.MaxInt when
// none limits it). Target selection uses it to simulate a zone's share of each class.
func (t *topology) domainRoom(ct *classTopology, key, d string) int {
	if !t.domainAllowed(ct, key, d) {
		return 0
	}
	room := math.MaxInt
	for _, g := range ct.owned {
		if g.key == key && g.kind == kindSpread {
			room = min(room, t.spreadRoom(g, ct, d))
		}
	}
	return room
}

// eligibleDomains are the domains some owner of the group may use (nodeAffinityPolicy Honor).
func (t *topology) eligibleDomains(g *topoGroup) []string {
	all := t.groupDomains(g)
	if g.anyDomain {
		return all
	}
	var out []string
	for _, d := range all {
		for _, r := range g.ownReqs {
			if r.Has(d) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// poolDomainPrices notes, for every domain of key a new claim of pools (those whose taints admit
// accepts, all when admit is nil) can take, the price of each candidate type there.
func poolDomainPrices(pools []*poolState, key string, admit func([]corev1.Taint) bool, note func(string, float64)) {
	for _, ps := range pools {
		if admit != nil && !admit(ps.Taints) {
			continue
		}
		poolReq := ps.reqs[key]
		for _, c := range ps.candidates {
			switch key {
			case LabelZone, LabelZoneID, LabelCapacityType:
				// Offering keys: the domains are those of the available offerings.
				for i := range c.it.Offerings {
					o := &c.it.Offerings[i]
					if !c.it.compatibleOffering(o, ps.reqs, ps.unavailable) {
						continue
					}
					switch {
					case key == LabelZone:
						note(o.Zone, o.Price)
					case key == LabelCapacityType:
						note(o.CapacityType, o.Price)
					case o.ZoneID != "": // zone ids unknown (an old catalog file): no domain
						note(o.ZoneID, o.Price)
					}
				}
			default:
				r := c.it.Requirements[key]
				switch {
				case r == nil:
					r = poolReq
				case poolReq != nil:
					r = r.Intersection(poolReq)
				}
				if r != nil && !r.complement {
					for _, v := range r.values {
						note(v, c.price)
					}
				}
			}
		}
	}
}
