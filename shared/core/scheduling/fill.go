package scheduling

// fillScanLimit bounds how many fitting classes fill scores per pick, so that a solve stays near
// linear in the number of classes; classes are scanned largest first.
const fillScanLimit = 1024

// fill packs pending pods into a new claim until nothing more fits. Each pick takes, among the largest
// fitting classes, the one that leaves the claim's free room on its target type closest to zero in
// normalised CPU and memory (norm-based greedy for vector bin packing). Mixing CPU-heavy and
// memory-heavy pods this way leaves less of either idle than plain first-fit-decreasing.
func (s *solver) fill(cl *claim) {
	w := 0
	for _, k := range s.pending {
		if k.next < len(k.pods) {
			s.pending[w] = k
			w++
		}
	}
	s.pending = s.pending[:w]
	// cands holds the classes already scanned and kept for this claim, in pending order; the classes
	// from s.pending[rest:] have not been scanned yet. Scanning lazily keeps a fill's cost near the
	// scan limit rather than the number of pending classes.
	cands := s.fillBuf[:0] // reused across fills: fill does not nest
	defer func() { s.fillBuf = cands[:0] }()
	rest := 0
	s.joinEpoch++
	for {
		free := cl.target.usable.Sub(cl.requests)
		u := cl.target.usable
		best, bestScore, scanned := -1, 0.0, 0
		w := 0
		consider := func(k *podClass) bool {
			if k.next >= len(k.pods) || !k.requests.Fits(free) || !s.mayJoinCached(cl, k) {
				return false // dropped for this claim: room only shrinks and topology only fills up
			}
			scanned++
			dc := share(free.CPU-k.requests.CPU, u.CPU)
			dm := share(free.Memory-k.requests.Memory, u.Memory)
			if score := -(dc*dc + dm*dm); best < 0 || score > bestScore {
				best, bestScore = w, score
			}
			return true
		}
		i := 0
		for ; i < len(cands) && scanned < fillScanLimit; i++ {
			if k := cands[i]; consider(k) {
				cands[w] = k
				w++
			}
		}
		if i < len(cands) {
			cands = append(cands[:w], cands[i:]...)
		} else {
			cands = cands[:w]
			for ; rest < len(s.pending) && scanned < fillScanLimit; rest++ {
				if k := s.pending[rest]; consider(k) {
					cands = append(cands, k)
					w++
				}
			}
		}
		if best < 0 {
			return
		}
		k := cands[best]
		st := &k.steps[k.step]
		merged := len(cl.sigs)
		if cl.pool.tolerates(k, st) != nil || !s.tryClaim(cl, k, st, k.pods[k.next]) {
			cands = append(cands[:best], cands[best+1:]...)
			continue
		}
		if len(cl.sigs) != merged {
			s.joinEpoch++ // the claim's requirements may have narrowed
		}
		s.consume(k)
	}
}

func share(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// mayJoinCached is a cheap pre-check of whether a pod of class k could join claim cl: the pool's taints
// and the topology rules of topoJoins. The topology verdict is cached on the class's classTopology,
// which classes with the same topology share, and stands while nothing it depends on changed: the
// claim's requirements (joinEpoch) and the state of the groups the topology owns or is kept away by
// (their versions only grow, so their sum changes whenever one does).
func (s *solver) mayJoinCached(cl *claim, k *podClass) bool {
	st := &k.steps[k.step]
	if cl.pool.tolerates(k, st) != nil {
		return false
	}
	ct := st.topo
	if ct == nil {
		return true
	}
	stamp := 0
	for _, g := range ct.owned {
		stamp += g.version
	}
	for _, g := range ct.inverse {
		stamp += g.version
	}
	if j := ct.joined; j.epoch == s.joinEpoch && j.stamp == stamp {
		return j.ok
	}
	ok := s.topoJoins(cl, ct)
	ct.joined = topoCheck{epoch: s.joinEpoch, stamp: stamp, ok: ok}
	return ok
}
