package scheduling

import (
	"maps"
	"math"
	"sync"
)

// Every solve of a Prepared asks, per topology key, which domains its slots are in and which a new
// claim can take, and the answers only change with the few nodes a solve leaves out. Scanning every
// slot (and every pool's catalog) for them was a fifth of a simulation at 2,000 nodes; domainIndex
// answers once per Prepared, and preparedDomains corrects for the nodes left out.

// keyDomains is what a Prepared's templates say about one key.
type keyDomains struct {
	// order are the distinct domains of the slots ("" for a slot in none), in the order the slots
	// first have them; count how many slots have each.
	order []string
	count map[string]int
	// pools are the cheapest price a new claim pays in each domain (poolDomainPrices).
	pools map[string]float64
}

// domainIndex holds keyDomains by key for a Prepared's slots and pools (templates, never
// modified). It is safe for concurrent solves.
type domainIndex struct {
	slots []*nodeSlot
	pools []*poolState
	mu    sync.Mutex
	byKey map[string]*keyDomains
}

func (x *domainIndex) forKey(key string) *keyDomains {
	x.mu.Lock()
	defer x.mu.Unlock()
	if k, ok := x.byKey[key]; ok {
		return k
	}
	k := &keyDomains{count: map[string]int{}, pools: map[string]float64{}}
	for _, slot := range x.slots {
		d := singleValue(slot.reqs, key)
		if k.count[d] == 0 {
			k.order = append(k.order, d)
		}
		k.count[d]++
	}
	poolDomainPrices(x.pools, key, nil, func(v string, price float64) {
		if p, ok := k.pools[v]; !ok || price < p {
			k.pools[v] = price
		}
	})
	x.byKey[key] = k
	return k
}

// preparedDomains is a Prepared solve's view of the index: the template slots it leaves out.
type preparedDomains struct {
	index   *domainIndex
	leftOut []*nodeSlot
}

// has reports whether a slot the solve keeps is in domain d of key.
func (p *preparedDomains) has(k *keyDomains, key, d string) bool {
	n := k.count[d]
	for _, slot := range p.leftOut {
		if n > 0 && singleValue(slot.reqs, key) == d {
			n--
		}
	}
	return n > 0
}

// slotDomains is solver.domainsOfSlots for the slots the solve keeps, in the templates' order.
func (p *preparedDomains) slotDomains(key string) []string {
	k := p.index.forKey(key)
	if len(p.leftOut) == 0 {
		return k.order
	}
	var out []string
	for _, d := range k.order {
		if p.has(k, key, d) {
			out = append(out, d)
		}
	}
	return out
}

// values is solver.domainValues(key, nil) for the slots the solve keeps and the template pools.
func (p *preparedDomains) values(key string) ([]string, map[string]float64) {
	k := p.index.forKey(key)
	prices := maps.Clone(k.pools)
	for _, d := range k.order {
		if _, ok := prices[d]; !ok && d != "" && p.has(k, key, d) {
			prices[d] = math.Inf(1)
		}
	}
	return sortedKeys(prices), prices
}
