package scheduling

import (
	"math"
)

// Capacity is one instance type as the lower bound sees it: usable CPU and memory at a price.
type Capacity struct {
	CPU, Memory float64
	Price       float64
}

// LowerBound returns the optimum of the linear relaxation of the packing problem over CPU and memory:
// the cheapest fractional mix of instance types whose total capacity covers cpu and memory. No integral
// packing can cost less. With two constraints an optimal basic solution uses at most two instance types,
// so the bound is found exactly by trying every type alone and every pair of Pareto-efficient types.
func LowerBound(cpu, memory float64, types []Capacity) float64 {
	return NewLPFront(types).Bound(cpu, memory)
}

// LPFront is a catalog prepared for many LowerBound questions: its Pareto front, which costs
// O(types²) to find, is found once.
type LPFront struct {
	types []Capacity
	front []int
}

// NewLPFront prepares types (which must not change while the front is in use).
func NewLPFront(types []Capacity) *LPFront {
	return &LPFront{types: types, front: paretoFront(types)}
}

// Bound is LowerBound(cpu, memory, types) for the front's types.
func (f *LPFront) Bound(cpu, memory float64) float64 {
	return solveLP(cpu, memory, f.types, f.front).cost
}

// lpMix is an optimal LP solution: x copies of types[a] and y copies of types[b] (b = -1 for a single
// type) at total cost.
type lpMix struct {
	cost float64
	a, b int
	x, y float64
}

// solveLP solves the two-resource covering LP over the types indexed by idx.
func solveLP(cpu, memory float64, types []Capacity, idx []int) lpMix {
	best := lpMix{cost: math.Inf(1), a: -1, b: -1}
	if cpu <= 0 && memory <= 0 {
		return lpMix{a: -1, b: -1}
	}
	for _, i := range idx {
		t := types[i]
		n := max(cpu/t.CPU, memory/t.Memory)
		if c := t.Price * n; c < best.cost {
			best = lpMix{cost: c, a: i, b: -1, x: n}
		}
	}
	for ii, i := range idx {
		for _, j := range idx[ii+1:] {
			a, b := types[i], types[j]
			// Solve a.CPU·x + b.CPU·y = cpu, a.Memory·x + b.Memory·y = memory.
			det := a.CPU*b.Memory - b.CPU*a.Memory
			if det == 0 {
				continue
			}
			x := (cpu*b.Memory - b.CPU*memory) / det
			y := (a.CPU*memory - cpu*a.Memory) / det
			if x < 0 || y < 0 {
				continue
			}
			if c := a.Price*x + b.Price*y; c < best.cost {
				best = lpMix{cost: c, a: i, b: j, x: x, y: y}
			}
		}
	}
	if best.a < 0 {
		return lpMix{a: -1, b: -1}
	}
	return best
}

// paretoFront returns the indices of the types that no other type beats on both CPU per dollar and
// memory per dollar; dominated types never appear in an optimal LP solution. Of identical types the
// first is kept.
func paretoFront(types []Capacity) []int {
	var out []int
	for i, t := range types {
		if t.Price <= 0 || t.CPU <= 0 || t.Memory <= 0 {
			continue
		}
		ct, mt := t.CPU/t.Price, t.Memory/t.Price
		dominated := false
		for j, u := range types {
			if i == j || u.Price <= 0 || u.CPU <= 0 || u.Memory <= 0 {
				continue
			}
			cu, mu := u.CPU/u.Price, u.Memory/u.Price
			if cu >= ct && mu >= mt && (cu > ct || mu > mt || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	return out
}
