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
	cands := append([]*podClass(nil), s.pending...)
	for {
		free := cl.target.usable.Sub(cl.requests)
		u := cl.target.usable
		best, bestScore, scanned := -1, 0.0, 0
		w := 0
		i := 0
		zone := claimZone(cl)
		for ; i < len(cands) && scanned < fillScanLimit; i++ {
			k := cands[i]
			if k.next >= len(k.pods) || !k.requests.Fits(free) || !s.mayJoin(cl, k, zone) {
				continue // dropped for this claim: room only shrinks and topology only fills up
			}
			cands[w] = k
			scanned++
			dc := share(free.CPU-k.requests.CPU, u.CPU)
			dm := share(free.Memory-k.requests.Memory, u.Memory)
			if score := -(dc*dc + dm*dm); best < 0 || score > bestScore {
				best, bestScore = w, score
			}
			w++
		}
		cands = append(cands[:w], cands[i:]...)
		if best < 0 {
			return
		}
		k := cands[best]
		st := &k.steps[k.step]
		if cl.pool.tolerates(k, st) != nil || !s.tryClaim(cl, k, st, k.pods[k.next]) {
			cands = append(cands[:best], cands[best+1:]...)
			continue
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
