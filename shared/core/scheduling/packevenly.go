package scheduling

import (
	"cmp"
	"slices"
)

// packWhole packs items, largest first, onto a whole number of nodes with the given usable resources,
// each pod onto the least loaded node (load: the largest of its CPU, memory and pod shares), or when
// that one is full for it onto the node it leaves least loaded, so that every node gets about the
// same mix and all end up nearly full. The number of nodes is nodes (or the items' demand when nodes
// is negative) rounded down, at least one; the pods that fit none of them are returned as the rest.
func (p *repacker) packWhole(items []kindCount, usable Resources, nodes float64) (bins []repackBin, rest []kindCount) {
	if len(items) == 0 {
		return nil, nil
	}
	load := func(r Resources) float64 {
		return max(share(r.CPU, usable.CPU), share(r.Memory, usable.Memory), share(r.Pods, usable.Pods))
	}
	if nodes < 0 {
		total, _ := p.demand(items)
		nodes = load(total)
	}
	bins = make([]repackBin, max(int(nodes+1e-9), 1))
	order := make([]int, len(items))
	loads := make([]float64, len(items))
	for i, it := range items {
		order[i], loads[i] = i, load(p.requests(it))
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(loads[b], loads[a]) })
	h := newBinHeap(len(bins))
	after := func(u *Resources, r Resources) float64 {
		return max(share(u.CPU+r.CPU, usable.CPU), share(u.Memory+r.Memory, usable.Memory), share(u.Pods+r.Pods, usable.Pods))
	}
	for _, i := range order {
		it := items[i]
		r := p.requests(it)
		for placed := 0; placed < it.n; placed++ {
			best := -1
			if j := h.items[0]; bins[j].used.fitsWith(r, usable) {
				best = j
			} else {
				// The least loaded node is full for this pod; take the one it leaves least loaded.
				bestLoad := 0.0
				for _, j := range h.items {
					if u := &bins[j].used; u.fitsWith(r, usable) {
						if l := after(u, r); best < 0 || l < bestLoad {
							best, bestLoad = j, l
						}
					}
				}
			}
			if best < 0 {
				// Nodes only fill up: no later pod of this kind fits either.
				rest = append(rest, kindCount{it.kind, it.n - placed})
				break
			}
			b := &bins[best]
			if n := len(b.content); n > 0 && b.content[n-1].kind == it.kind {
				b.content[n-1].n++
			} else {
				b.content = append(b.content, kindCount{it.kind, 1})
			}
			b.used = b.used.Add(r)
			h.keys[best] = load(b.used)
			h.fix(best)
		}
	}
	out := bins[:0]
	for _, b := range bins {
		if len(b.content) > 0 {
			out = append(out, b)
		}
	}
	return out, rest
}

// binHeap is a min-heap of node indices by load; ties go to the lower index, so packing is
// deterministic.
type binHeap struct {
	items []int
	keys  []float64
	pos   []int // position of each node in items
}

func newBinHeap(n int) *binHeap {
	h := &binHeap{items: make([]int, n), keys: make([]float64, n), pos: make([]int, n)}
	for i := range n {
		h.items[i], h.pos[i] = i, i
	}
	return h
}

func (h *binHeap) less(a, b int) bool {
	x, y := h.items[a], h.items[b]
	return h.keys[x] < h.keys[y] || (h.keys[x] == h.keys[y] && x < y)
}

func (h *binHeap) swap(a, b int) {
	h.items[a], h.items[b] = h.items[b], h.items[a]
	h.pos[h.items[a]], h.pos[h.items[b]] = a, b
}

func (h *binHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *binHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.items) {
			return
		}
		m := l
		if r := l + 1; r < len(h.items) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// fix restores the heap after node x's key changed.
func (h *binHeap) fix(x int) {
	i := h.pos[x]
	h.up(i)
	h.down(h.pos[x])
}
