package disruption

// prefixSearch binary-searches the prefix length of a list of candidates (at least two) for the
// longest prefix that can be removed. Its result is the outcome of the valid prefix tried that
// saves the most (the shortest of equals) with that prefix, or no prefix.
//
// It runs as steps, next then took, so that runSearches can advance several searches at once and
// solve their simulations together: each search asks for the simulations it would have made alone,
// in the same order, and reaches the same result.
type prefixSearch struct {
	e    *engine
	list []*candidate
	// lo and hi bound the prefix lengths still to search.
	lo, hi int
	// wholeFirst is set until the whole list, to be tried first, has been asked for; whole is its
	// outcome while the search has not reused it; probe is the prefix length of the simulation
	// asked for and not yet taken, probingWhole whether it is the whole list tried first.
	wholeFirst, probingWhole bool
	whole                    *outcome
	probe                    int
	best                     outcome
	bestN                    int
	done                     bool
	// lastValid is whether the last outcome the search took was valid; guessed holds the outcomes
	// of prefixes simulated on a guess (guess), by length, until the search asks for them.
	lastValid bool
	guessed   map[int]outcome
	// rejected is the outcome of the last prefix weighed that the Balanced policy rejected, and
	// rejectedN its length (0: none).
	rejected  outcome
	rejectedN int
}

// newPrefixSearch starts a search over list.
//
// The whole list goes first: when all of it can be deleted, no prefix saves more (a deletion saves
// what its nodes cost, a replacement less), so one simulation ends the search that would take
// log2(n) to get there, or fail to where validity is not monotone in the prefix's length.
// Otherwise the search goes on as it would have, reusing the whole list's outcome if it gets
// there. In a Sequence tick where multi-node already found nothing (Options.multiFailed), the
// whole list is not tried first: there it mostly fails, and costs a simulation per run.
func (e *engine) newPrefixSearch(list []*candidate) *prefixSearch {
	return &prefixSearch{e: e, list: list, lo: 2, hi: len(list),
		wholeFirst: len(list) >= 2 && !e.in.Options.multiFailed && e.mightSave(list) && e.passes(list)}
}

// next returns the prefix to simulate next, or nil when the search is over.
func (s *prefixSearch) next() []*candidate {
	if s.done {
		return nil
	}
	if s.wholeFirst {
		s.wholeFirst = false
		if s.e.mayRun() {
			s.probe, s.probingWhole = len(s.list), true
			return s.list
		}
	}
	for {
		mid := s.step()
		switch {
		case mid == 0:
			s.done = true
			return nil
		case !s.e.mayRun():
			s.lo = s.hi + 1 // the budget is spent: keep the best so far
		default:
			if o, ok := s.guessed[mid]; ok {
				// Simulated on a guess: counted now, as it would have been run now.
				delete(s.guessed, mid)
				s.weigh(mid, o)
				continue
			}
			s.probe = mid
			return s.list[:mid]
		}
	}
}

// step moves the search past the prefixes it need not simulate (those the pruner rules out, and the
// whole list once tried) to the next it would simulate, and returns its length, or 0 when the
// search is over.
func (s *prefixSearch) step() int {
	for s.lo <= s.hi {
		mid := (s.lo + s.hi) / 2
		switch {
		case !s.e.mightSave(s.list[:mid]) || !s.e.passes(s.list[:mid]):
			s.hi = mid - 1
		case mid == len(s.list) && s.whole != nil:
			o := *s.whole
			s.whole = nil
			s.weigh(mid, o)
		default:
			return mid
		}
	}
	return 0
}

// guess returns the prefix the search will ask for after the probe in flight, supposing that probe
// comes out as the last one did (valid or not; the whole list tried first is supposed not to end
// the search), or nil when there is none to simulate. Searches' outcomes come in long runs (a
// search either finds every prefix it tries valid or none), so the guess is mostly right. It
// spends no budget: a guessed outcome is counted only when next reaches it (and the budget
// allows it), so a search that simulates on guesses asks for and reaches what it would have
// without.
func (s *prefixSearch) guess() []*candidate {
	if s.probe == 0 {
		return nil
	}
	c := *s
	c.guessed = nil
	if c.probingWhole {
		c.probingWhole = false
		c.whole = &outcome{action: ActionReplace}
	} else {
		supposed := outcome{invalid: "supposed"}
		if s.lastValid {
			supposed = outcome{action: ActionReplace}
		}
		c.weigh(c.probe, supposed)
	}
	mid := c.step()
	if _, ok := s.guessed[mid]; mid == 0 || ok {
		return nil
	}
	return c.list[:mid]
}

// took hands the search the outcome of the prefix next returned.
func (s *prefixSearch) took(o outcome) {
	n := s.probe
	s.probe = 0
	s.lastValid = o.invalid == ""
	if s.probingWhole {
		s.probingWhole = false
		if o.invalid == "" && o.action == ActionDelete {
			s.best, s.bestN, s.done = o, n, true
			return
		}
		s.whole = &o
		return
	}
	s.weigh(n, o)
}

// weigh moves the search on from the outcome of the prefix of length n.
func (s *prefixSearch) weigh(n int, o outcome) {
	s.lastValid = o.invalid == ""
	if o.invalid != "" {
		if o.score != nil {
			s.rejected, s.rejectedN = o, n
		}
		s.hi = n - 1
		return
	}
	// A longer prefix that saves no more only disrupts more nodes (say, one replaced by a new node
	// of its own type): the shorter one stays the answer.
	if s.bestN == 0 || o.savings > s.best.savings+savingsEpsilon {
		s.best, s.bestN = o, n
	}
	s.lo = n + 1
}

// result is the search's answer once next has returned nil.
func (s *prefixSearch) result() (outcome, []*candidate) {
	// A whole list the search did not get to is weighed last, so the shorter of equals stays.
	if w := s.whole; w != nil && w.invalid == "" && (s.bestN == 0 || w.savings > s.best.savings+savingsEpsilon) {
		return *w, s.list
	}
	return s.best, s.list[:s.bestN]
}

// runSearches advances the searches together to their ends: each round takes the next simulation
// of every search not over yet, in the searches' order, and solves them at once.
//
// When there are more processors than searches asking, each round also simulates, on the spare
// ones, the prefix a search will ask for next if its probe comes out as guessed (guess): a lone
// search then mostly makes two steps per round. The outcomes, and the simulations counted, are
// those of the searches without guesses (TestGuessesLeaveTheSearchAsItWas).
func (e *engine) runSearches(searches []*prefixSearch) {
	width := e.width()
	for {
		var sets [][]*candidate
		var from []*prefixSearch
		for _, s := range searches {
			if p := s.next(); p != nil {
				sets, from = append(sets, p), append(from, s)
			}
		}
		if len(sets) == 0 {
			return
		}
		asked := len(sets)
		for i := 0; i < asked && len(sets) < width; i++ {
			if g := from[i].guess(); g != nil {
				sets, from = append(sets, g), append(from, from[i])
			}
		}
		for i, o := range e.simulateAll(sets) {
			if i < asked {
				from[i].took(o)
				continue
			}
			s := from[i]
			if s.guessed == nil {
				s.guessed = map[int]outcome{}
			}
			s.guessed[len(sets[i])] = o
		}
	}
}
