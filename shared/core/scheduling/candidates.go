package scheduling

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
)

// candidate is an instance type a NodePool may launch, with what pods can use on it after the pool's
// DaemonSets and the price of its cheapest offering the pool allows.
type candidate struct {
	it        *InstanceType
	usable    Resources
	daemons   Resources
	ports     []HostPort
	price     float64
	priceRank int
}

// poolState is a NodePool prepared for one solve.
type poolState struct {
	NodePool
	reqs        Requirements
	candidates  []*candidate // compatible types with an available offering, cheapest first
	limits      *limits
	minValues   bool
	unavailable UnavailableOfferings
	// preparedErr explains why the pool can launch nothing at all.
	preparedErr *Rejection
	// narrowed caches, per pod requirement signature, the pool's requirements and candidates narrowed by
	// those pod requirements.
	narrowed map[string]*narrowing
	claims   int
	// usedUp explains the reservations excluded because this solve used them up; initial holds the
	// candidates from before the first exclusion (reservations.go).
	usedUp      []string
	initial     []*candidate
	initialReqs Requirements
	// reservations is set when the solve has capacity reservations.
	reservations bool
	// shared, on a Prepared's templates and their fresh copies, keeps narrowings for every solve of
	// the Prepared: without reservations a narrowing depends only on the pool and the step.
	shared *narrowings
	// states, on the same pools, keeps for every solve of the Prepared the requirements and
	// candidates claims reach by merging their pods' requirements (claimstates.go).
	states *claimStates
}

// narrowings are narrowings by step signature, safe for concurrent solves.
type narrowings struct {
	mu sync.Mutex
	m  map[string]*narrowing
}

type narrowing struct {
	reqs       Requirements
	candidates []*candidate
	// front holds the candidates on the Pareto front of CPU and memory per dollar.
	front []*candidate
	// market prices the candidates without reservations when the pool offers any (marketPrices).
	market map[*candidate]float64
	err    *Rejection
}

func newPoolState(p NodePool, catalog []*InstanceType, daemons []*daemon, unavailable UnavailableOfferings) (*poolState, error) {
	reqs, err := nodePoolRequirements(p)
	if err != nil {
		return nil, err
	}
	ps := &poolState{NodePool: p, reqs: reqs, limits: newLimits(p.Limits), unavailable: unavailable, narrowed: map[string]*narrowing{}}
	for _, r := range reqs {
		if r.MinValues > 0 {
			ps.minValues = true
		}
	}
	if p.InstanceTypes != nil {
		catalog = p.InstanceTypes
	}
	for _, it := range catalog {
		if it.Requirements.Intersects(reqs) != nil || !it.HasAvailableOffering(reqs, unavailable) {
			continue
		}
		var overhead Resources
		var ports []HostPort
		if len(daemons) > 0 { // the intersection copies every key of the type: skip it when no daemon asks
			overhead, ports = daemonOverhead(daemons, p.Taints, reqs.Intersection(it.Requirements))
		}
		usable := it.Allocatable.Sub(overhead)
		if usable.CPU < 0 || usable.Memory < 0 || usable.Pods < 0 {
			continue
		}
		ps.candidates = append(ps.candidates, &candidate{it: it, usable: usable, daemons: overhead, ports: ports, price: it.cheapestPrice(reqs, unavailable)})
	}
	slices.SortStableFunc(ps.candidates, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.Name, b.it.Name))
	})
	for i, c := range ps.candidates {
		c.priceRank = i
	}
	if len(ps.candidates) == 0 {
		ps.preparedErr = &Rejection{NodePool: p.Name, Constraint: ConstraintOffering, Detail: "no instance type matches the nodepool's requirements with an available offering"}
	}
	return ps, nil
}

// fresh is the pool as a solve starts with it, from ps as newPoolState made it (a Prepared's
// template): the same requirements and candidates, which a solve never modifies in place (it
// replaces them), and fresh limits, claims and caches.
func (ps *poolState) fresh() *poolState {
	c := &poolState{NodePool: ps.NodePool, reqs: ps.reqs, candidates: ps.candidates, limits: newLimits(ps.Limits),
		minValues: ps.minValues, unavailable: ps.unavailable, narrowed: map[string]*narrowing{}, shared: ps.shared, states: ps.states}
	if ps.preparedErr != nil {
		e := *ps.preparedErr
		c.preparedErr = &e
	}
	return c
}

// narrow returns the pool's requirements and candidates narrowed by a pod's requirements at one step.
func (ps *poolState) narrow(step *classStep) *narrowing {
	if n, ok := ps.narrowed[step.sig]; ok {
		return n
	}
	if ps.shared != nil && !ps.reservations {
		ps.shared.mu.Lock()
		n, ok := ps.shared.m[step.sig]
		ps.shared.mu.Unlock()
		if !ok {
			n = ps.narrowFor(step)
			// Solves running at once may both compute it; all keep the first stored, so that
			// claims opened from it share its claim states (claimstates.go).
			ps.shared.mu.Lock()
			if first, ok := ps.shared.m[step.sig]; ok {
				n = first
			} else {
				ps.shared.m[step.sig] = n
			}
			ps.shared.mu.Unlock()
		}
		ps.narrowed[step.sig] = n
		return n
	}
	n := ps.narrowFor(step)
	ps.narrowed[step.sig] = n
	return n
}

// narrowFor computes narrow's answer.
func (ps *poolState) narrowFor(step *classStep) *narrowing {
	n := &narrowing{}
	if err := ps.reqs.Compatible(step.Requirements); err != nil {
		n.err = &Rejection{NodePool: ps.Name, Constraint: ConstraintRequirement, Detail: err.Error()}
		return n
	}
	n.reqs = ps.reqs.Intersection(step.Requirements)
	n.candidates = repriced(filterCandidates(ps.candidates, n.reqs, ps.unavailable), n.reqs, ps.unavailable)
	caps := capacities(n.candidates)
	if ps.reservations {
		n.market = marketPrices(n.candidates, n.reqs, ps.unavailable)
		caps = marketCapacities(n.candidates, n.market)
	}
	for _, i := range paretoFront(caps) {
		n.front = append(n.front, n.candidates[i])
	}
	if len(n.candidates) == 0 {
		n.err = ps.blockedByReservations(n.reqs, nil)
		if n.err == nil {
			n.err = &Rejection{NodePool: ps.Name, Constraint: ConstraintOffering, Detail: fmt.Sprintf("no instance type with an available offering satisfies %s", step.Requirements)}
		}
	}
	return n
}

// filterCandidates keeps the candidates compatible with reqs that have an available offering under them.
func filterCandidates(cands []*candidate, reqs Requirements, unavailable UnavailableOfferings) []*candidate {
	var out []*candidate
	for _, c := range cands {
		if c.it.Requirements.Intersects(reqs) == nil && c.it.HasAvailableOffering(reqs, unavailable) {
			out = append(out, c)
		}
	}
	return out
}

// shortfall explains why no candidate can hold requests: the resources short on the roomiest type.
func shortfall(pool string, cands []*candidate, requests Resources) Rejection {
	var best *candidate
	bestShort := math.MaxInt
	for _, c := range cands {
		if short := len(requests.Exceeding(c.usable)); short < bestShort || (short == bestShort && c.usable.CPU > best.usable.CPU) {
			best, bestShort = c, short
		}
	}
	detail := fmt.Sprintf("no instance type has room for %s", requests)
	if best != nil {
		detail += fmt.Sprintf(" (closest %s has %s after daemonsets; short on %v)", best.it.Name, best.usable, requests.Exceeding(best.usable))
	}
	return Rejection{NodePool: pool, Constraint: ConstraintResources, Detail: detail}
}

// tolerates checks the pool's taints against a pod class at a relaxation step.
func (ps *poolState) tolerates(c *podClass, step *classStep) *Rejection {
	if len(ps.Taints) == 0 {
		return nil
	}
	if err := Tolerates(c.tols, ps.Taints, !step.TolerateAllPreferNoSchedule); err != nil {
		return &Rejection{NodePool: ps.Name, Constraint: ConstraintTaint, Detail: err.Error()}
	}
	return nil
}

func hasPreferNoScheduleTaint(pools []NodePool) bool {
	for _, p := range pools {
		if hasPreferNoSchedule(p.Taints) {
			return true
		}
	}
	return false
}

func capacities(cands []*candidate) []Capacity {
	out := make([]Capacity, len(cands))
	for i, c := range cands {
		out[i] = Capacity{CPU: float64(c.usable.CPU), Memory: float64(c.usable.Memory), Price: c.price}
	}
	return out
}

// repriced returns the candidates priced at their cheapest offering under reqs (a pod's zone, zone-id
// or capacity-type requirement can rule out the cheapest offering of the pool), cheapest first. Candidates
// whose price does not change are shared; changed ones are copied.
func repriced(cands []*candidate, reqs Requirements, unavailable UnavailableOfferings) []*candidate {
	if !reqs.Has(LabelZone) && !reqs.Has(LabelZoneID) && !reqs.Has(LabelCapacityType) {
		return cands
	}
	out := make([]*candidate, len(cands))
	for i, c := range cands {
		if p := c.it.cheapestPrice(reqs, unavailable); p != c.price {
			cc := *c
			cc.price = p
			c = &cc
		}
		out[i] = c
	}
	slices.SortStableFunc(out, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(a.price, b.price), cmp.Compare(a.it.Name, b.it.Name))
	})
	for i, c := range out {
		if c.priceRank != i {
			cc := *c
			cc.priceRank = i
			out[i] = &cc
		}
	}
	return out
}
