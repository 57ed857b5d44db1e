package disruption

import (
	"cmp"
	"math"
	"slices"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// room is free CPU (millicores) and memory (bytes).
type room struct{ cpu, memory float64 }

// pruner holds what the cheap pre-check needs: the free room of every initialized destination and
// the catalog as the LP lower bound sees it.
type pruner struct {
	free      map[string]room
	totalFree room
	// rooms lists the free room of every initialized destination; fitsSomewhere memoizes, by
	// request, whether one of them can take a pod.
	rooms         []room
	fitsSomewhere map[room]bool
	// types are every pool's compatible types at their cheapest offering; nonSpot the same without
	// spot offerings; typesLP and nonSpotLP their LP fronts, found once per Decide.
	types, nonSpot     []scheduling.Capacity
	typesLP, nonSpotLP *scheduling.LPFront
	pods               *podCache
}

func newPruner(e *engine) *pruner {
	p := &pruner{free: map[string]room{}, fitsSomewhere: map[room]bool{}, pods: e.in.Options.pods}
	for _, n := range e.destinations {
		if !n.Initialized {
			continue // a pod moved there makes the command invalid anyway
		}
		if e.settling[n.Node.Name] {
			continue // inside its consolidateAfter: takes no candidate's pod
		}
		alloc := scheduling.ResourcesFromList(n.Node.Status.Allocatable)
		if alloc.IsZero() {
			alloc = n.Allocatable
		}
		used := e.in.Options.pods.activeRequests(n.Node.Name, n.Pods)
		r := room{cpu: math.Max(0, float64(alloc.CPU-used.CPU)), memory: math.Max(0, float64(alloc.Memory-used.Memory))}
		p.free[n.Node.Name] = r
		p.rooms = append(p.rooms, r)
		p.totalFree.cpu += r.cpu
		p.totalFree.memory += r.memory
	}
	// Each pool offers the types compatible with its requirements at its cheapest compatible
	// offering; the union over pools is a superset of what a replacement can be.
	type priced struct {
		it    *scheduling.InstanceType
		price float64
	}
	seen := map[priced]bool{}
	for _, pool := range e.schedPools {
		reqs, err := scheduling.RequirementsFromSpecs(pool.Requirements)
		if err != nil {
			reqs = scheduling.Requirements{} // Solve reports the error; the bound stays valid
		}
		reqs.AddAll(scheduling.RequirementsFromLabels(pool.Labels))
		types := pool.InstanceTypes
		if len(types) == 0 {
			types = e.in.InstanceTypes
		}
		for _, it := range types {
			if it.Requirements.Intersects(reqs) != nil {
				continue
			}
			if o, ok := it.CheapestOffering(reqs, e.in.Unavailable); ok && !seen[priced{it, o.Price}] {
				seen[priced{it, o.Price}] = true
				p.types = append(p.types, scheduling.Capacity{CPU: float64(it.Allocatable.CPU), Memory: float64(it.Allocatable.Memory), Price: o.Price})
			}
			nonSpot := reqs.Copy()
			nonSpot.Add(scheduling.MustRequirement(scheduling.LabelCapacityType, scheduling.OpNotIn, scheduling.CapacityTypeSpot))
			if o, ok := it.CheapestOffering(nonSpot, e.in.Unavailable); ok && !seen[priced{it, -1 - o.Price}] {
				seen[priced{it, -1 - o.Price}] = true
				p.nonSpot = append(p.nonSpot, scheduling.Capacity{CPU: float64(it.Allocatable.CPU), Memory: float64(it.Allocatable.Memory), Price: o.Price})
			}
		}
	}
	p.typesLP, p.nonSpotLP = scheduling.NewLPFront(p.types), scheduling.NewLPFront(p.nonSpot)
	return p
}

// mightSave is a necessary condition for removing cands to save money, computed without a
// simulation. Whatever cannot fit in the free room left on the other initialized nodes (CPU and
// memory summed over them, ignoring every constraint) needs new nodes, which by the LP lower bound
// cost at least LowerBound of it (and for a single candidate, whose replacement is one node, must be
// one instance type that holds it); if that is not below what the candidates cost, no simulation can
// find a saving. Everything the bound ignores
// (pending pods, daemons, fragmentation, constraints) only makes the real answer worse. When all
// candidates are spot and spot-to-spot consolidation is off, a spot replacement is refused anyway,
// so the bound prices the other capacity types only.
func (e *engine) mightSave(cands []*candidate) bool {
	if e.prune == nil {
		e.prune = newPruner(e)
	}
	p := e.prune
	var need room
	total := 0.0
	avail := p.totalFree
	allSpot := true
	for _, c := range cands {
		allSpot = allSpot && c.node.CapacityType == scheduling.CapacityTypeSpot
		total += c.node.Price
		r := p.free[c.name()]
		avail.cpu -= r.cpu
		avail.memory -= r.memory
		need.cpu += c.requests.cpu
		need.memory += c.requests.memory
	}
	// Pods that fit in no single node's free room must all go to the new node too.
	var unfit room
	for _, c := range cands {
		u := p.unfit(c)
		unfit.cpu += u.cpu
		unfit.memory += u.memory
	}
	excess := room{cpu: math.Max(math.Max(0, need.cpu-avail.cpu), unfit.cpu), memory: math.Max(math.Max(0, need.memory-avail.memory), unfit.memory)}
	if excess.cpu == 0 && excess.memory == 0 {
		return true
	}
	types, lp := p.types, p.typesLP
	if allSpot && !e.in.Options.SpotToSpotConsolidation {
		types, lp = p.nonSpot, p.nonSpotLP
	}
	// Several candidates may be replaced by several new nodes, which need not be one type that holds
	// the whole excess.
	fits := maxReplacements(len(cands)) > 1
	for _, t := range types {
		if fits {
			break
		}
		fits = t.CPU >= excess.cpu && t.Memory >= excess.memory
	}
	return fits && lp.Bound(excess.cpu, excess.memory) < total
}

// unfit sums the requests of the candidate's pods that no initialized destination has the free room
// for, even before anything else moves (the candidate's own node included, which only loosens the
// bound).
func (p *pruner) unfit(c *candidate) room {
	if c.unfit != nil {
		return *c.unfit
	}
	var out room
	for _, pod := range c.pods {
		req := p.pods.podRequests(pod)
		r := room{cpu: float64(req.CPU), memory: float64(req.Memory)}
		fits, ok := p.fitsSomewhere[r]
		if !ok {
			for _, free := range p.rooms {
				if free.cpu >= r.cpu && free.memory >= r.memory {
					fits = true
					break
				}
			}
			p.fitsSomewhere[r] = fits
		}
		if !fits {
			out.cpu += r.cpu
			out.memory += r.memory
		}
	}
	c.unfit = &out
	return out
}

// repackOrder returns the candidates ordered for a repack: the most overpaid first, that is the
// highest price above the LP lower bound of their own pods' requests on the cheapest capacity the
// NodePools offer (on-demand nodes and oversized nodes lead), then in consolidation order. With
// spot-to-spot consolidation off, an all-spot prefix cannot be replaced, and this order puts the
// on-demand nodes, which may take spot nodes with them into a spot replacement, at the front.
func (e *engine) repackOrder(cands []*candidate) []*candidate {
	if e.prune == nil {
		e.prune = newPruner(e)
	}
	overpaid := make(map[*candidate]float64, len(cands))
	for _, c := range cands {
		overpaid[c] = c.node.Price - e.prune.typesLP.Bound(c.requests.cpu, c.requests.memory)
	}
	out := slices.Clone(cands)
	slices.SortStableFunc(out, func(a, b *candidate) int { return cmp.Compare(overpaid[b], overpaid[a]) })
	return out
}
