package scheduling

import "sync"

// claimStates memoizes, for one of a Prepared's pools, what tryAdd computes when a claim takes a pod
// whose requirement signature it has not merged yet: the claim's requirements intersected with the
// step's, and its candidates filtered by the result. Without reservations, and when the pool's limits
// left no candidate out as the claim opened, a claim's requirements and candidates depend only on the
// pool's narrowing by its first pod's requirements and the signatures merged after it, in that order.
// The states are therefore a tree: a root per narrowing, a child per signature merged next. Roots are
// keyed by the narrowing itself, not its signature, since a target is looked for among the candidates
// by pointer and the candidates must be the very ones the solve's narrowing holds. The key is the
// merge order itself, so no property of intersection (such as order independence) is relied on. The
// solves of one Prepared merge the same signatures into their claims again and again; they share the
// tree, also when they run concurrently. PrepareFrom keeps the pools, and with them the tree.
type claimStates struct {
	mu    sync.Mutex
	roots map[*narrowing]*claimState
	// size counts the states stored; past maxClaimStates none is added.
	size int
}

// maxClaimStates bounds the states a pool keeps, since each holds a slice of candidates. The merge
// orders of a Prepared's solves repeat: on the 2,000-node hard cluster no pool kept more than 16.
const maxClaimStates = 1 << 12

// claimState is a claim's requirements and candidates after a sequence of merges, or the refusal of
// the last merge.
type claimState struct {
	reqs       Requirements
	candidates []*candidate
	// incompatible is set when the last signature's requirements conflict with those before it: no
	// claim in the parent state takes such a pod, and none is ever in this state.
	incompatible bool
	// next holds the states one merge away, by signature; claimStates.mu guards it.
	next map[string]*claimState
}

func newClaimStates() *claimStates {
	return &claimStates{roots: map[*narrowing]*claimState{}}
}

// root returns the state of a claim opened with every candidate of the pool's narrowing n.
func (m *claimStates) root(n *narrowing) *claimState {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.roots[n]; ok {
		return st
	}
	st := &claimState{reqs: n.reqs, candidates: n.candidates}
	if m.size < maxClaimStates {
		m.roots[n] = st
		m.size++
	}
	return st
}

// merge returns the state after from merges step's requirements. A state the tree has no room for
// is computed and returned all the same, unstored: the claim in it merges on without the memo.
func (m *claimStates) merge(from *claimState, step *classStep, unavailable UnavailableOfferings) *claimState {
	m.mu.Lock()
	st, ok := from.next[step.sig]
	m.mu.Unlock()
	if ok {
		return st
	}
	reqs, cands, ok := mergeStep(from.reqs, from.candidates, step, unavailable)
	st = &claimState{reqs: reqs, candidates: cands, incompatible: !ok}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := from.next[step.sig]; ok { // another solve got there first; keep one state
		return prev
	}
	if m.size < maxClaimStates {
		if from.next == nil {
			from.next = map[string]*claimState{}
		}
		from.next[step.sig] = st
		m.size++
	}
	return st
}

// mergeStep narrows a claim's requirements and candidates by a step's requirements, or returns
// false when they conflict.
func mergeStep(reqs Requirements, cands []*candidate, step *classStep, unavailable UnavailableOfferings) (Requirements, []*candidate, bool) {
	if reqs.Compatible(step.Requirements) != nil {
		return nil, nil, false
	}
	merged := reqs.Intersection(step.Requirements)
	return merged, filterCandidates(cands, merged, unavailable), true
}
