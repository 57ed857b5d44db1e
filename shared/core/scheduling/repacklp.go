package scheduling

import (
	"cmp"
	"math"
	"slices"
)

// repacker packs the pods of one repackGroup anew: kinds are its sets of identical pods, options the
// instance types its nodes may use.
type repacker struct {
	kinds   []repackKind
	options []repackOption
}

// repackBin is one node of a re-packing: how many pods of which kinds, and their requests.
type repackBin struct {
	content []kindCount
	used    Resources
}

// repackDepth bounds how often lpRepack re-packs the pods its nodes left over.
const repackDepth = 2

// fallbackTypes is how many single types packFallback tries.
const fallbackTypes = 2

func (p *repacker) requests(kc kindCount) Resources { return p.kinds[kc.kind].class.requests }

// demand returns the total and the element-wise largest requests of items.
func (p *repacker) demand(items []kindCount) (total, largest Resources) {
	for _, it := range items {
		if it.n > 0 {
			total = total.Add(times(p.requests(it), it.n))
			largest = largest.Max(p.requests(it))
		}
	}
	return total, largest
}

// lpRepack packs items onto nodes guided by the optimum of the LP relaxation over the instance types
// that hold every item (so that any item can go on either type of the mix). The pods are split
// between the LP's two types: those with the least memory per CPU go to the type with less memory per
// CPU until its share of the LP's CPU and memory is used, the rest to the other. Each part is spread
// evenly over the whole number of nodes of its type the LP pays for (its count rounded down, and
// rounded to the nearest); what does not fit is re-packed the same way, up to repackDepth times. A
// variant packs only the first part so and re-packs all the other pods. Packing everything onto one
// type (packFallback) is the baseline. The cheapest packing is returned with its cost, each node
// priced at the cheapest option that holds it.
func (p *repacker) lpRepack(items []kindCount, depth int) ([]repackBin, float64) {
	total, largest := p.demand(items)
	if total.Pods == 0 && total.CPU == 0 && total.Memory == 0 {
		return nil, 0
	}
	fitting := make([]Capacity, len(p.options))
	for i, o := range p.options {
		fitting[i] = Capacity{CPU: float64(o.cand.usable.CPU), Memory: float64(o.cand.usable.Memory), Price: o.price}
		if !largest.Fits(o.cand.usable) {
			fitting[i].Price = 0 // paretoFront skips it
		}
	}
	best, bestCost := p.packFallback(items, total, fitting)
	if depth >= repackDepth {
		return best, bestCost
	}
	try := func(left []kindCount, parts ...repackPart) {
		var bins []repackBin
		rest := left
		for _, part := range parts {
			b, r := p.packWhole(part.items, p.options[part.option].cand.usable, part.nodes)
			bins = append(bins, b...)
			rest = append(rest, r...)
		}
		if len(bins) == 0 {
			return // no progress
		}
		more, moreCost := p.lpRepack(rest, depth+1)
		if math.IsInf(moreCost, 1) {
			return
		}
		bins = append(bins, more...)
		if cost := p.binsCost(bins); cost < bestCost {
			best, bestCost = bins, cost
		}
	}
	mix := solveLP(float64(total.CPU), float64(total.Memory), fitting, paretoFront(fitting))
	if mix.a < 0 {
		return best, bestCost
	}
	// The LP pays for fractional nodes; whole nodes are its counts rounded down, or to the nearest.
	for i, round := range []func(float64) float64{math.Floor, math.Round} {
		if i > 0 && math.Round(mix.x) == math.Floor(mix.x) && math.Round(mix.y) == math.Floor(mix.y) {
			break // the same counts again
		}
		if mix.b < 0 {
			try(nil, repackPart{items, mix.a, round(mix.x)})
			continue
		}
		lo, hi := mix.a, mix.b
		nlo, nhi := round(mix.x), round(mix.y)
		if fitting[lo].Memory*fitting[hi].CPU > fitting[hi].Memory*fitting[lo].CPU {
			lo, hi, nlo, nhi = hi, lo, nhi, nlo
		}
		cpuHeavy, memHeavy := p.splitByShape(items, nlo*fitting[lo].CPU, nlo*fitting[lo].Memory, p.options[lo].cand.usable)
		try(nil, repackPart{cpuHeavy, lo, nlo}, repackPart{memHeavy, hi, nhi})
		try(memHeavy, repackPart{cpuHeavy, lo, nlo})
	}
	return best, bestCost
}

// repackPart is a set of pods to pack onto nodes of one option; nodes is how many, or negative to
// derive it from the pods' demand.
type repackPart struct {
	items  []kindCount
	option int
	nodes  float64
}

// packFallback packs all items evenly onto nodes of one type and returns the cheapest result. It tries
// the types that hold the largest item and cover the items' total demand cheapest on their own (LP
// cost), at most fallbackTypes of them.
func (p *repacker) packFallback(items []kindCount, total Resources, fitting []Capacity) ([]repackBin, float64) {
	front := paretoFront(fitting)
	alone := func(i int) float64 {
		t := fitting[i]
		return t.Price * max(float64(total.CPU)/t.CPU, float64(total.Memory)/t.Memory)
	}
	slices.SortStableFunc(front, func(a, b int) int { return cmp.Compare(alone(a), alone(b)) })
	var best []repackBin
	bestCost := math.Inf(1)
	for _, i := range front[:min(len(front), fallbackTypes)] {
		usable := p.options[i].cand.usable
		bins, rest := p.packWhole(items, usable, -1)
		for len(rest) > 0 {
			// Every pod fits an empty node: pack the rest onto fresh nodes.
			more, r := p.packWhole(rest, usable, -1)
			bins, rest = append(bins, more...), r
		}
		if cost := p.binsCost(bins); cost < bestCost {
			best, bestCost = bins, cost
		}
	}
	return best, bestCost
}

// binsCost prices each node at the cheapest option that holds it.
func (p *repacker) binsCost(bins []repackBin) float64 {
	cost := 0.0
	for _, b := range bins {
		_, price := cheapestFitting(p.options, b.used)
		cost += price
	}
	return cost
}

// splitByShape returns the pods, among those that fit usable, with the least memory per CPU whose
// sum stays within the given CPU and memory, and the rest; both keep the items' order.
func (p *repacker) splitByShape(items []kindCount, cpu, memory float64, usable Resources) (lo, hi []kindCount) {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	ratio := func(i int) float64 {
		r := p.requests(items[i])
		if r.CPU <= 0 {
			return math.Inf(1)
		}
		return float64(r.Memory) / float64(r.CPU)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ratio(a), ratio(b)) })
	take := make([]int, len(items))
	var usedCPU, usedMem float64
	for _, i := range order {
		r := p.requests(items[i])
		if !r.Fits(usable) {
			continue
		}
		n := items[i].n
		if r.CPU > 0 {
			n = min(n, int(max((cpu-usedCPU)/float64(r.CPU), 0)))
		}
		if r.Memory > 0 {
			n = min(n, int(max((memory-usedMem)/float64(r.Memory), 0)))
		}
		take[i] = n
		usedCPU += float64(n) * float64(r.CPU)
		usedMem += float64(n) * float64(r.Memory)
	}
	for i, it := range items {
		if take[i] > 0 {
			lo = append(lo, kindCount{it.kind, take[i]})
		}
		if take[i] < it.n {
			hi = append(hi, kindCount{it.kind, it.n - take[i]})
		}
	}
	return lo, hi
}
