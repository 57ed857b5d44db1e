package disruption

import (
	"math"

	"github.com/nodewright/nodewright/shared/scheduling"
)

// room is free CPU (millicores) and memory (bytes).
type room struct{ cpu, memory float64 }

// pruner holds what the cheap pre-check needs: the free room of every initialized destination and
// the catalog as the LP lower bound sees it.
type pruner struct {
	free      map[string]room
	totalFree room
	types     []scheduling.Capacity
}

func newPruner(e *engine) *pruner {
	p := &pruner{free: map[string]room{}}
	for _, n := range e.destinations {
		if !n.Initialized {
			continue // a pod moved there makes the command invalid anyway
		}
		alloc := scheduling.ResourcesFromList(n.Node.Status.Allocatable)
		if alloc.IsZero() {
			alloc = n.Allocatable
		}
		var used scheduling.Resources
		for _, pod := range n.Pods {
			if isActive(pod) {
				used = used.Add(scheduling.PodRequests(pod))
			}
		}
		r := room{cpu: math.Max(0, float64(alloc.CPU-used.CPU)), memory: math.Max(0, float64(alloc.Memory-used.Memory))}
		p.free[n.Node.Name] = r
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
			o, ok := it.CheapestOffering(reqs, e.in.Unavailable)
			if !ok || seen[priced{it, o.Price}] {
				continue
			}
			seen[priced{it, o.Price}] = true
			p.types = append(p.types, scheduling.Capacity{CPU: float64(it.Allocatable.CPU), Memory: float64(it.Allocatable.Memory), Price: o.Price})
		}
	}
	return p
}

// mightSave is a necessary condition for removing cands to save money, computed without a
// simulation. Whatever cannot fit in the free room left on the other initialized nodes (CPU and
// memory summed over them, ignoring every constraint) needs the one new node, which must be a single
// instance type that holds it and, by the LP lower bound, costs at least LowerBound of it; if that is
// not below what the candidates cost, no simulation can find a saving. Everything the bound ignores
// (pending pods, daemons, fragmentation, constraints) only makes the real answer worse.
func (e *engine) mightSave(cands []*candidate) bool {
	if e.prune == nil {
		e.prune = newPruner(e)
	}
	p := e.prune
	var need room
	total := 0.0
	avail := p.totalFree
	for _, c := range cands {
		total += c.node.Price
		r := p.free[c.name()]
		avail.cpu -= r.cpu
		avail.memory -= r.memory
		need.cpu += c.requests.cpu
		need.memory += c.requests.memory
	}
	excess := room{cpu: math.Max(0, need.cpu-avail.cpu), memory: math.Max(0, need.memory-avail.memory)}
	if excess.cpu == 0 && excess.memory == 0 {
		return true
	}
	fits := false
	for _, t := range p.types {
		if t.CPU >= excess.cpu && t.Memory >= excess.memory {
			fits = true
			break
		}
	}
	return fits && scheduling.LowerBound(excess.cpu, excess.memory, p.types) < total
}
