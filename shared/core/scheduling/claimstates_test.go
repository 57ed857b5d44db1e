package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// statesPool is a pool over types of both architectures offered in some of three zones, with the
// claim states a Prepared gives its pools.
func statesPool(t *testing.T) *poolState {
	mk := func(name, arch string, cpu int64, price float64, zones ...string) *InstanceType {
		r := Resources{CPU: cpu * 1000, Memory: 8 << 30, Pods: 50}
		var offerings []Offering
		for _, z := range zones {
			offerings = append(offerings, Offering{Zone: z, CapacityType: CapacityTypeSpot, Price: price, Available: true})
		}
		return NewInstanceType(name, map[string]string{LabelArch: arch}, r, r, offerings)
	}
	catalog := []*InstanceType{mk("amd-ab", "amd64", 4, 0.2, "a", "b"), mk("amd-c", "amd64", 8, 0.3, "c"),
		mk("arm-b", "arm64", 4, 0.1, "b"), mk("arm-bc", "arm64", 8, 0.25, "b", "c")}
	ps, err := newPoolState(NodePool{Name: "p"}, catalog, nil, nil)
	require.NoError(t, err)
	ps.shared, ps.states = &narrowings{m: map[string]*narrowing{}}, newClaimStates()
	return ps
}

func stepOf(reqs ...*Requirement) *classStep {
	r := NewRequirements(reqs...)
	return &classStep{Attempt: Attempt{Requirements: r}, sig: r.String()}
}

// mergedDirectly is what tryAdd computes without the memo for a claim opened at first that then
// merges steps in order.
func mergedDirectly(t *testing.T, ps *poolState, first *classStep, steps ...*classStep) (Requirements, []*candidate, bool) {
	n := ps.narrow(first)
	require.Nil(t, n.err)
	reqs, cands := n.reqs, n.candidates
	for _, st := range steps {
		var ok bool
		if reqs, cands, ok = mergeStep(reqs, cands, st, ps.unavailable); !ok {
			return nil, nil, false
		}
	}
	return reqs, cands, true
}

func candidateNames(cands []*candidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.it.Name)
	}
	return out
}

// TestClaimStatesMatchDirectMerges: a state reached through the memo, on a miss and on a hit, has the
// requirements and candidates merging directly gives; merges in another order are other states; a
// conflicting merge is remembered as one; past the bound nothing is stored.
func TestClaimStatesMatchDirectMerges(t *testing.T) {
	ps := statesPool(t)
	plain := stepOf()
	zoneBC := stepOf(MustRequirement(LabelZone, OpIn, "b", "c"))
	arm := stepOf(MustRequirement(LabelArch, OpIn, "arm64"))
	notB := stepOf(MustRequirement(LabelZone, OpNotIn, "b"))
	zoneA := stepOf(MustRequirement(LabelZone, OpIn, "a"))

	root := ps.states.root(ps.narrow(plain))
	require.Same(t, root, ps.states.root(ps.narrow(plain)), "one root per narrowing")

	walk := func(steps ...*classStep) *claimState {
		st := root
		for _, s := range steps {
			st = ps.states.merge(st, s, ps.unavailable)
			require.False(t, st.incompatible)
		}
		return st
	}
	for _, order := range [][]*classStep{{zoneBC, arm}, {arm, zoneBC}, {zoneBC, arm, notB}, {notB, arm, zoneBC}, {arm, notB}} {
		miss := walk(order...)
		hit := walk(order...)
		require.Same(t, miss, hit, "the second walk hits the states the first stored")
		reqs, cands, ok := mergedDirectly(t, ps, plain, order...)
		require.True(t, ok)
		assert.Equal(t, reqs.String(), hit.reqs.String())
		assert.Equal(t, candidateNames(cands), candidateNames(hit.candidates))
	}
	assert.Equal(t, []string{"arm-b", "arm-bc"}, candidateNames(walk(zoneBC, arm).candidates))
	assert.Equal(t, []string{"arm-bc"}, candidateNames(walk(zoneBC, arm, notB).candidates))
	assert.NotSame(t, walk(zoneBC, arm), walk(arm, zoneBC), "merge orders are keys of their own")
	assert.NotSame(t, walk(zoneBC, arm, notB), walk(notB, arm, zoneBC))

	conflict := ps.states.merge(walk(zoneBC), zoneA, ps.unavailable)
	assert.True(t, conflict.incompatible, "zone a after zones b and c")
	assert.Same(t, conflict, ps.states.merge(walk(zoneBC), zoneA, ps.unavailable))
	_, _, ok := mergedDirectly(t, ps, plain, zoneBC, zoneA)
	assert.False(t, ok)

	ps.states.size = maxClaimStates
	from := walk(arm)
	full := ps.states.merge(from, zoneA, ps.unavailable)
	assert.Empty(t, candidateNames(full.candidates), "no arm64 type in zone a")
	assert.NotContains(t, from.next, zoneA.sig, "past the bound a state is computed, not stored")
}

// TestClaimTryAddWithStatesMatchesWithout: two claims of a pool taking the same pods in the same
// order, one through the pool's claim states and one merging directly, end with equal requirements,
// candidates and target, and refuse the same pods.
func TestClaimTryAddWithStatesMatchesWithout(t *testing.T) {
	ps := statesPool(t)
	first := stepOf()
	n := ps.narrow(first)
	c := &podClass{requests: Resources{CPU: 500, Pods: 1}}
	open := func(memo bool) *claim {
		cl := &claim{pool: ps, sigs: map[string]bool{}}
		if memo {
			cl.state = ps.states.root(n)
		}
		cl.commit(c, first, &corev1.Pod{}, c.requests, n.reqs, n.candidates, n.candidates[0])
		return cl
	}
	steps := []*classStep{stepOf(MustRequirement(LabelZone, OpIn, "b", "c")), stepOf(MustRequirement(LabelZone, OpIn, "a")),
		stepOf(MustRequirement(LabelArch, OpIn, "arm64")), stepOf(MustRequirement(LabelZone, OpNotIn, "b"))}
	for range 2 { // the second round hits the states the first stored
		with, without := open(true), open(false)
		for i, st := range steps {
			a := with.tryAdd(c, st, &corev1.Pod{}, demand{cpu: 4000}, true)
			b := without.tryAdd(c, st, &corev1.Pod{}, demand{cpu: 4000}, true)
			require.Equal(t, b, a, "step %d", i)
			require.Equal(t, without.reqs.String(), with.reqs.String(), "step %d", i)
			require.Equal(t, candidateNames(without.candidates), candidateNames(with.candidates), "step %d", i)
			require.Same(t, without.target, with.target, "step %d", i)
		}
		require.NotNil(t, with.state)
		assert.Equal(t, []string{"arm-bc"}, candidateNames(with.candidates))
	}
}
