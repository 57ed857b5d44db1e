package scheduling

import (
	"math"
	"slices"
)

// chooseTarget picks the instance type a new claim for class c is packed toward. For each
// Pareto-efficient type that fits the pod, it simulates filling one
// node from the pending pods that share the pod's requirements and tolerate the pool, and scores the
// node by how much it lowers the LP lower bound of the remaining demand per dollar of its price. This
// is the pricing step of column generation with the LP bound as the value of capacity: a type whose
// shape or size strands capacity scores low even when its price per CPU is the best.
func (s *solver) chooseTarget(ps *poolState, a *admission, c *podClass, st *classStep) *candidate {
	// The choice changes slowly with the remaining demand: reuse it for the same pool and requirements
	// until the demand has shrunk by a tenth, if the pod fits the cached target.
	key := targetKey{pool: ps, sig: st.sig}
	if cached, ok := s.targets[key]; ok && c.requests.Fits(cached.target.usable) &&
		s.demand.cpu >= 0.97*cached.demand.cpu && s.demand.memory >= 0.97*cached.demand.memory {
		return cached.target
	}
	target := s.computeTarget(ps, a, c, st)
	s.targets[key] = cachedTarget{target: target, demand: s.demand}
	return target
}

// simulatePicks bounds the pods a simulated fill places before extrapolating.
const simulatePicks = 64

// targetKey identifies a target choice: pool and pod requirements.
type targetKey struct {
	pool *poolState
	sig  string
}

type cachedTarget struct {
	target *candidate
	demand demand
}

func (s *solver) computeTarget(ps *poolState, a *admission, c *podClass, st *classStep) *candidate {
	options := make([]*candidate, 0, len(a.front)+1)
	for _, cand := range a.front {
		if c.requests.Fits(cand.usable) {
			options = append(options, cand)
		}
	}
	var market map[*candidate]float64
	if ps.reservations {
		market = ps.narrow(st).market
	}
	if market != nil {
		// The front ignores reservations (their few instances are no supply to plan the demand
		// with); the cheapest fitting type that launches into one competes as well, at its price.
		for _, cand := range a.fit {
			if cand.price < market[cand] {
				if !containsCandidate(options, cand) {
					options = append(options, cand)
				}
				break
			}
		}
	}
	if len(options) == 0 {
		// No efficient type holds the pod; the cheapest that does is as good a target as any.
		return a.fit[0]
	}
	if len(options) == 1 {
		return options[0]
	}
	caps := capacities(a.front)
	if len(caps) == 0 {
		caps = capacities(a.fit)
	}
	if market != nil {
		caps = marketCapacities(a.front, market)
		if len(caps) == 0 {
			caps = marketCapacities(a.fit, market)
		}
	}
	idx := make([]int, len(caps))
	for i := range idx {
		idx[i] = i
	}
	peers := s.peers(ps, c, st)
	left, d := s.domainShares(a.reqs, peers)
	before := solveLP(d.cpu, d.memory, caps, idx).cost
	var best *candidate
	bestScore := math.Inf(-1)
	for _, cand := range options {
		packed := simulateFill(cand, peers, left)
		after := solveLP(max(d.cpu-float64(packed.CPU), 0), max(d.memory-float64(packed.Memory), 0), caps, idx).cost
		score := (before - after) / cand.price
		if best == nil || score > bestScore+1e-12 || (math.Abs(score-bestScore) <= 1e-12 && cand.priceRank < best.priceRank) {
			best, bestScore = cand, score
		}
	}
	return best
}

// peers returns the pending classes a claim opened for c at step st could also take: same
// requirements, and tolerating the pool's taints. The opening class comes first.
func (s *solver) peers(ps *poolState, c *podClass, st *classStep) []*podClass {
	out := []*podClass{c}
	for _, k := range s.pending {
		if k == c || k.next >= len(k.pods) || k.steps[k.step].base != st.base || ps.tolerates(k, &k.steps[k.step]) != nil {
			continue
		}
		out = append(out, k)
	}
	return out
}

// domainShares returns how many pods of each peer a claim with requirements reqs may still take, and
// the remaining demand such a claim competes for. Without topology that is every pending pod and the
// whole demand. When reqs narrow the claim to one domain of a key (a zone) on which a peer's spread
// or affinity rules are, the peer is limited to that domain's share (domainRoom) and the pods that
// must go to other domains leave the demand: under zone spread a claim in one zone packs a third of
// each deployment at that zone's prices, not the whole workload.
func (s *solver) domainShares(reqs Requirements, peers []*podClass) ([]int, demand) {
	left := make([]int, len(peers))
	d := s.demand
	for i, k := range peers {
		left[i] = len(k.pods) - k.next
		ct := k.steps[k.step].topo
		if ct == nil {
			continue
		}
		n := left[i]
		for _, key := range ct.keys {
			if v := singleValue(reqs, key); v != "" {
				n = min(n, s.topo.domainRoom(ct, key, v))
			}
		}
		if i == 0 {
			n = max(n, 1) // the opening pod itself is placed here
		}
		if n < left[i] {
			gone := float64(left[i] - n)
			d.cpu -= gone * float64(k.requests.CPU)
			d.memory -= gone * float64(k.requests.Memory)
			d.pods -= gone * float64(k.requests.Pods)
			left[i] = n
		}
	}
	d.cpu, d.memory, d.pods = max(d.cpu, 0), max(d.memory, 0), max(d.pods, 0)
	return left, d
}

// simulateFill packs one node of type cand the way fill would, without placing anything: the first pod
// of the opening class peers[0], then repeatedly the fitting class that leaves the free room closest
// to zero, taking at most left[i] pods of peers[i]. It returns the packed requests.
func simulateFill(cand *candidate, peers []*podClass, limits []int) Resources {
	left := slices.Clone(limits)
	live := make([]int, len(peers))
	for i := range peers {
		live[i] = i
	}
	used := peers[0].requests
	left[0]--
	u := cand.usable
	for picks := 0; ; picks++ {
		if picks == simulatePicks {
			// A node this large holds many pods: assume the mix so far repeats until a resource runs
			// out, which estimates the packing's shape without simulating every pod.
			f := math.Inf(1)
			if used.CPU > 0 {
				f = min(f, float64(u.CPU)/float64(used.CPU))
			}
			if used.Memory > 0 {
				f = min(f, float64(u.Memory)/float64(used.Memory))
			}
			if math.IsInf(f, 1) || f <= 1 {
				return used
			}
			return Resources{CPU: int64(float64(used.CPU) * f), Memory: int64(float64(used.Memory) * f)}
		}
		free := u.Sub(used)
		best, bestScore, scanned, w, i := -1, 0.0, 0, 0, 0
		for ; i < len(live) && scanned < fillScanLimit; i++ {
			k := peers[live[i]]
			if left[live[i]] == 0 || !k.requests.Fits(free) {
				continue // never fits again: free room only shrinks
			}
			live[w] = live[i]
			scanned++
			dc := share(free.CPU-k.requests.CPU, u.CPU)
			dm := share(free.Memory-k.requests.Memory, u.Memory)
			if score := -(dc*dc + dm*dm); best < 0 || score > bestScore {
				best, bestScore = w, score
			}
			w++
		}
		live = append(live[:w], live[i:]...)
		if best < 0 {
			return used
		}
		used = used.Add(peers[live[best]].requests)
		left[live[best]]--
	}
}
