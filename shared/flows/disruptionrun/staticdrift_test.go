package disruptionrun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// staticCount counts the static pool "fixed"'s claims as provisioning does: Active ones stand for a node
// it keeps (the replacement in flight and the node not yet draining both count).
func (f *fixture) staticCount() provisioning.StaticCount {
	claims, err := f.store.ListClaims(context.Background())
	require.NoError(f.t, err)
	return provisioning.CountStatic(claims, "fixed")
}

// TestStaticDriftReplacesOneForOneWithinTheBudget: three drifted nodes of a static pool of 3 replicas with
// a budget of one node are rolled one at a time: each roll is one command with exactly one replacement of
// the same pool, launched before anything drains; the next starts only once the node replaced is
// gone (a node draining still takes the budget). The pool's claims never go above replicas + 1 (the budget) nor its serving claims below
// replicas.
func TestStaticDriftReplacesOneForOneWithinTheBudget(t *testing.T) {
	f := newFixture(t, "100%")
	f.withStaticPool(3, `[{nodes: "1"}]`)
	for _, n := range []string{"a", "b", "c"} {
		f.staticNode(n, "100m")
		f.launch.setDrift("claim-"+n, amiDrift())
	}
	check := func(step string) {
		c := f.staticCount()
		assert.LessOrEqual(t, c.Active, int64(4), "%s: at most replicas + budget claims", step)
		assert.GreaterOrEqual(t, c.Active, int64(3), "%s: never fewer than replicas", step)
	}

	rep := f.run()
	require.Len(t, rep.Commands, 1, "static drift: %v errors: %v", rep.StaticDrift, rep.Errors)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
	assert.Equal(t, MethodStaticDrift, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, cmd.Replacements, 1, "exactly one replacement")
	assert.Equal(t, "fixed", cmd.Replacements[0].NodePool, "on the same pool")
	assert.Empty(t, f.terms.claims(), "replacement first: nothing drains yet")
	assert.Contains(t, rep.StaticDrift[0], "replacing 1 drifted nodes 1:1 (2 drifted nodes wait for the pool's Drifted budget)")
	first := cmd.Nodes[0].Claim
	replacement := f.store.command().Replacements[0]
	check("replacement launched")

	f.clock.Advance(time.Minute)
	rep = f.run()
	assert.Empty(t, rep.Commands, "the roll waits for its replacement")
	check("waiting")

	f.initialize(replacement)
	f.clock.Advance(time.Minute)
	rep = f.run()
	assert.Equal(t, map[string]string{first: "Drifted"}, f.terms.claims(), "the node goes once its replacement initialized")
	assert.Empty(t, rep.Commands, "the next roll waits until the node replaced is draining")
	check("handed over")

	c := f.store.claim(first) // the termination flow starts draining it: it still counts against the budget
	c.Lifecycle = state.Draining
	f.store.setClaim(c)
	f.clock.Advance(time.Minute)
	rep = f.run()
	assert.Empty(t, rep.Commands, "the budget of one is taken by the node draining")
	assert.Contains(t, rep.StaticDrift[0], "2 drifted nodes wait for the pool's Drifted budget")
	check("draining")

	f.gone(strings.TrimPrefix(first, "claim-"))
	f.clock.Advance(time.Minute)
	rep = f.run()
	require.Len(t, rep.Commands, 1, "static drift: %v", rep.StaticDrift)
	assert.NotEqual(t, first, rep.Commands[0].Nodes[0].Claim)
	check("second roll")
}

// TestStaticDriftNeverConsolidatesAndWaitsForScaleDown: an empty drifted static node is never
// consolidated or deleted without a replacement; while the pool is above its replicas the surplus is
// removed first and no drift roll starts; a replacement that cannot be planned starts nothing.
func TestStaticDriftNeverConsolidatesAndWaitsForScaleDown(t *testing.T) {
	t.Run("above replicas", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.withStaticPool(1, `[{nodes: "100%"}]`)
		f.staticNode("a", "100m")
		f.staticNode("b", "100m", "100m")
		f.launch.setDrift("claim-a", amiDrift())
		f.launch.setDrift("claim-b", amiDrift())
		rep := f.run()
		require.Len(t, rep.Commands, 1)
		assert.Equal(t, MethodStaticScaleDown, rep.Commands[0].Method)
		assert.Equal(t, map[string]string{"claim-a": string(ReasonOverprovisioned)}, f.terms.claims())
		require.Len(t, rep.StaticDrift, 1)
		assert.Contains(t, rep.StaticDrift[0], "replacing 0 drifted nodes")
		assert.Contains(t, rep.StaticDrift[0], "a scale-down or a roll is under way")
	})
	t.Run("no plan", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.withStaticPool(1, `[{nodes: "100%"}]`)
		f.staticNode("a")
		f.launch.setDrift("claim-a", amiDrift())
		f.launch.staticErr = errors.New("static nodepool fixed: its EC2NodeClass cannot launch")
		rep := f.run()
		assert.Empty(t, rep.Commands, "an empty drifted static node is not deleted without its replacement")
		assert.Empty(t, f.terms.claims())
		assert.False(t, f.cluster.tainted("a"))
		assert.Contains(t, rep.StaticDrift[1], "node a not replaced: static nodepool fixed: its EC2NodeClass cannot launch")
	})
}
