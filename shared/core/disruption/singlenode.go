package disruption

import "runtime"

// width is how many simulations the engine solves at once: GOMAXPROCS, or Options.width.
func (e *engine) width() int {
	if w := e.in.Options.width; w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// singleNode takes the first underused candidate, in consolidation order, that can be deleted or
// replaced by a cheaper node.
//
// Its simulations run a batch at a time, solved together (Prepared.SolveAll), as many as there are
// processors: most fail, and those that fail are all needed. The answer, what it records in blocked
// and the simulations it counts are those of trying one candidate after another: the batch is read
// in order, a later candidate's simulation is dropped when an earlier one is valid, and so is what
// the loop one by one would have recorded only after reaching it
// (TestWiderMatchesOneAtATime).
func (e *engine) singleNode(cands []*candidate, b *budgets, blocked map[string]Kept) *Command {
	width := e.width()
	var skipped []Kept // recorded once the loop one by one would have passed them
	next := 0
	for {
		// The next batch: up to width candidates to simulate, each with the candidates skipped
		// before it.
		var batch []*candidate
		var before [][]Kept
		for next < len(cands) && len(batch) < width {
			c := cands[next]
			next++
			if c.empty() {
				continue
			}
			if k, skip := e.skipSingle(c, b); skip {
				skipped = append(skipped, k)
				continue
			}
			batch, before, skipped = append(batch, c), append(before, skipped), nil
		}
		if len(batch) == 0 {
			for _, k := range skipped {
				blocked[k.Node] = k
			}
			return nil
		}
		// Budget, in order: n of the batch may run; when n < len(batch), the budget ran out at
		// batch[n].
		n := 0
		for n < len(batch) && e.mayRun() {
			n++
		}
		sets := make([][]*candidate, n)
		for i := range n {
			sets[i] = batch[i : i+1]
		}
		outs := e.simulateAll(sets)
		for i, c := range batch {
			for _, k := range before[i] {
				blocked[k.Node] = k
			}
			if i == n {
				return nil // the budget is spent
			}
			o := outs[i]
			if o.invalid == "" {
				// The loop one by one would not have run the rest of the batch.
				e.sims -= n - i - 1
				if n < len(batch) {
					e.exhausted = false
				}
				return e.consolidation(MethodSingle, batch[i:i+1], o)
			}
			why := "no consolidation: " + o.invalid
			blocked[c.name()] = Kept{Node: c.name(), NodePool: c.pool.Name(), Reason: why}
			if o.score != nil {
				// A Balanced rejection is not memoized: the pool's totals change with every
				// command of the tick, and so may the score.
				e.noteRejected(MethodSingle, batch[i:i+1], o)
				continue
			}
			if e.memoSafe() {
				if e.failedSingle == nil {
					e.failedSingle = map[string]string{}
				}
				e.failedSingle[c.name()] = why
			}
		}
	}
}

// skipSingle says whether single-node passes c over without simulating it, and what it records
// for c then: its NodePool's budget is spent, its simulation failed earlier in the tick, the
// Balanced policy would reject even its deletion (mayPass), or the LP bound says no replacement of
// it can cost less.
func (e *engine) skipSingle(c *candidate, b *budgets) (Kept, bool) {
	if b.left(c.pool.Name(), ReasonUnderutilized) == 0 {
		return budgetKept(c, ReasonUnderutilized), true
	}
	if why, ok := e.knownFailed(c); ok {
		return Kept{Node: c.name(), NodePool: c.pool.Name(), Reason: why}, true
	}
	if ok, why := e.mayPass([]*candidate{c}); !ok {
		return Kept{Node: c.name(), NodePool: c.pool.Name(), Reason: "no consolidation: " + why}, true
	}
	if !e.mightSave([]*candidate{c}) {
		return Kept{Node: c.name(), NodePool: c.pool.Name(), Reason: "no consolidation: its pods would need a new node that costs at least as much as it does (LP lower bound)"}, true
	}
	return Kept{}, false
}
