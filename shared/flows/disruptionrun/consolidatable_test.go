package disruptionrun

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// consolidateAfter stores the fixture's NodePool again with consolidateAfter d ("5m", "Never"); budget
// "0" keeps commands out of these tests.
func (f *fixture) consolidateAfter(d string) {
	objs := decode(f.t, strings.Replace(fmt.Sprintf(poolYAML, "0"), "consolidateAfter: 0s", "consolidateAfter: "+d, 1))
	spec, err := json.Marshal(objs.NodePools[0])
	require.NoError(f.t, err)
	f.store.config = []state.ConfigItem{{Kind: state.KindNodePool, Name: "default", Spec: string(spec)}}
}

// followedNames are the claims handed to the follower since the last call, by name.
func (m *fakeClaimMirrors) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, c := range m.followed {
		out = append(out, c.Name)
	}
	m.followed = nil
	return out
}

// A node is marked Consolidatable once consolidateAfter has passed since it was first seen, the marked
// record is followed to its mirror, and a run with nothing changed writes nothing: no claim record and
// no mirror.
func TestASettledNodeIsMarkedConsolidatableOnceAndOnChangeOnly(t *testing.T) {
	f := newFixture(t, "0")
	f.consolidateAfter("5m")
	f.node("a", "medium", "1")
	m := &fakeClaimMirrors{store: f.store}
	f.runner.deps.ClaimMirrors = m

	rep := f.run()
	assert.Nil(t, f.store.claim("claim-a").Consolidatable, "first seen now: consolidateAfter counts from here")
	assert.Zero(t, rep.ConsolidatableMarks)

	f.clock.Advance(5 * time.Minute)
	rep = f.run()
	mark := f.store.claim("claim-a").Consolidatable
	require.NotNil(t, mark)
	assert.Equal(t, f.clock.Now().UTC(), mark.Since, "dated by the run that found consolidateAfter passed")
	assert.Equal(t, 1, rep.ConsolidatableMarks)
	assert.Equal(t, []string{"claim-a"}, m.take(), "the marked record is followed to its mirror")
	assert.Equal(t, 1, rep.ClaimMirrorsWritten)

	writes, calls := f.store.claimWrites(), m.calls
	for range 3 {
		f.clock.Advance(time.Minute)
		rep = f.run()
		assert.Zero(t, rep.ConsolidatableMarks)
	}
	assert.Equal(t, writes, f.store.claimWrites(), "a steady state writes no claim")
	assert.Equal(t, calls, m.calls, "nor any mirror")
	assert.Empty(t, m.take())
}

// A pod event takes the mark away (consolidateAfter counts again from it), and the cleared record is
// followed; once consolidateAfter has passed again the node is marked again.
func TestAPodEventClearsTheMark(t *testing.T) {
	f := newFixture(t, "0")
	f.consolidateAfter("5m")
	f.node("a", "medium", "1")
	m := &fakeClaimMirrors{store: f.store}
	f.runner.deps.ClaimMirrors = m
	f.run()
	f.clock.Advance(5 * time.Minute)
	f.run()
	require.NotNil(t, f.store.claim("claim-a").Consolidatable)
	m.take()

	f.clock.Advance(time.Minute)
	f.pod("a-new", "a", "1")
	rep := f.run()
	assert.Nil(t, f.store.claim("claim-a").Consolidatable, "a pod was bound to the node")
	assert.Equal(t, 1, rep.ConsolidatableMarks)
	assert.Equal(t, []string{"claim-a"}, m.take(), "the cleared record is followed")

	f.clock.Advance(4 * time.Minute)
	f.run()
	assert.Nil(t, f.store.claim("claim-a").Consolidatable, "consolidateAfter has not passed since the pod event")
	f.clock.Advance(time.Minute)
	f.run()
	assert.NotNil(t, f.store.claim("claim-a").Consolidatable)
}

// After a cold start the function cannot know whether a pod left while it was cold: consolidation waits
// consolidateAfter again, but a mark set by a warm process stays (no pod event was seen), so a cold start
// never rewrites the marks of the whole cluster. A mark whose condition no longer applies is cleared at
// once: consolidateAfter Never, or a node that is not initialized.
func TestAColdStartKeepsTheMarksAndNeverOrAnUninitializedNodeClearsThem(t *testing.T) {
	f := newFixture(t, "0")
	f.consolidateAfter("5m")
	f.node("a", "medium", "1")
	f.node("b", "medium")
	for _, n := range []string{"claim-a", "claim-b"} {
		c := f.store.claim(n)
		c.Consolidatable = &state.ConsolidatableMark{Since: start.Add(-time.Hour)}
		f.store.setClaim(c)
	}
	writes := f.store.claimWrites()
	rep := f.run() // a cold process: every node is first seen now
	assert.Equal(t, writes, f.store.claimWrites(), "nothing written on a cold start")
	assert.Zero(t, rep.ConsolidatableMarks)

	f.cluster.nodes[1].Labels["karpenter.sh/initialized"] = "false"
	f.clock.Advance(time.Minute)
	f.run()
	assert.NotNil(t, f.store.claim("claim-a").Consolidatable)
	assert.Nil(t, f.store.claim("claim-b").Consolidatable, "its node is not initialized")

	f.consolidateAfter("Never")
	f.clock.Advance(time.Minute)
	f.run()
	assert.Nil(t, f.store.claim("claim-a").Consolidatable, "consolidateAfter Never")
}

// A run writes at most MaxConsolidatableMarksPerRun marks; the next run writes the rest. With
// consolidateAfter 0s (the default) an initialized node is consolidatable at once, as in Karpenter.
func TestConsolidatableMarksAreBoundedPerRun(t *testing.T) {
	f := newFixture(t, "0")
	n := MaxConsolidatableMarksPerRun + 7
	for i := range n {
		f.node(fmt.Sprintf("n%03d", i), "medium")
	}
	rep := f.run()
	assert.Equal(t, MaxConsolidatableMarksPerRun, rep.ConsolidatableMarks)
	assert.Equal(t, 7, rep.ConsolidatableLeft)
	f.clock.Advance(time.Minute)
	rep = f.run()
	assert.Equal(t, 7, rep.ConsolidatableMarks)
	assert.Zero(t, rep.ConsolidatableLeft)
	for i := range n {
		assert.NotNil(t, f.store.claim(fmt.Sprintf("claim-n%03d", i)).Consolidatable)
	}
}
