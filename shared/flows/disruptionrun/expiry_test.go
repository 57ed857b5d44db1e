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
)

// expire makes node name's claim expired (launched an hour ago, expireAfter 30m).
func (f *fixture) expire(name string) {
	c := f.store.claim("claim-" + name)
	c.ExpireAfter = "30m0s"
	f.store.setClaim(c)
}

// runAs runs once under its own run id, so the commands of successive runs do not share ids.
func (f *fixture) runAs(id string) Report {
	rep, err := f.runner.Run(context.Background(), id)
	require.NoError(f.t, err)
	require.True(f.t, rep.Lease)
	return rep
}

// launches counts the replacements the fake launcher was asked to launch.
func (f *fixture) launches() int {
	f.launch.mu.Lock()
	defer f.launch.mu.Unlock()
	return len(f.launch.launched)
}

// Expiry is a hard lifetime, as in Karpenter v1: an expired node whose replacement fails is drained
// anyway instead of living on (and the failure is recorded for the back-off).
func TestExpiredNodeIsDrainedWhenItsReplacementFails(t *testing.T) {
	t.Run("the launch fails", func(t *testing.T) {
		f := newFixture(t, "0")
		f.node("old", "medium", "3")
		f.node("busy", "medium", "3")
		f.expire("old")
		f.runner.cfg.MaxCommands = 1
		f.launch.launchErr = errors.New("InvalidAMIID.NotFound")
		f.run()
		assert.Equal(t, "Expired", f.terms.claims()["claim-old"], "the expired node is handed to termination")
		c := f.store.command()
		assert.Equal(t, state.CommandTerminating, c.Phase)
		require.NotNil(t, c.ReplacementFailure)
		assert.Equal(t, "default", c.ReplacementFailure.NodePool)
		assert.Contains(t, f.store.kinds("node/old"), KindReplacementFailed)
	})
	t.Run("the replacement never initializes", func(t *testing.T) {
		f := newFixture(t, "0")
		f.node("old", "medium", "3")
		f.node("busy", "medium", "3")
		f.expire("old")
		f.runner.cfg.MaxCommands = 1
		f.run()
		c := f.store.command()
		require.Equal(t, state.CommandLaunching, c.Phase)
		repl := f.store.claim(c.Replacements[0])
		repl.ImageID = "ami-broken"
		f.store.setClaim(repl)
		assert.Empty(t, f.terms.claims())

		f.clock.Advance(DefaultReplacementTimeout + time.Minute)
		f.launch.prepareErr = errors.New("stop after advancing")
		f.run()
		got := f.store.commands[c.ID]
		assert.Equal(t, state.CommandTerminating, got.Phase, "not rolled back: %s", got.Outcome)
		assert.Equal(t, map[string]string{"claim-old": "Expired"}, f.terms.claims(),
			"the late replacement is left to the lifecycle; the expired node drains")
		require.NotNil(t, got.ReplacementFailure)
		assert.Equal(t, "ami-broken", got.ReplacementFailure.ImageID)
	})
}

// Replacements that keep failing in a NodePool back off (5 min, 10 min, ... after the last failure)
// instead of launching every run, and say so; a node of the pool initializing ends the back-off. An
// expired node in a pool backing off is drained without a replacement.
func TestFailedReplacementsBackOff(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("old", "medium", "3")
	f.node("busy", "medium", "3")
	f.launch.setDrift("claim-old", amiDrift())
	f.runner.cfg.MaxCommands = 1
	f.launch.launchErr = errors.New("InvalidAMIID.NotFound")

	f.runAs("run-1")
	require.Equal(t, 1, f.launches())
	assert.False(t, f.cluster.tainted("old"), "a drift is rolled back")

	f.clock.Advance(time.Minute)
	rep := f.runAs("run-2")
	assert.Equal(t, 1, f.launches(), "backing off: nothing launched a minute later")
	require.Len(t, rep.Rejected, 1)
	assert.Contains(t, rep.Rejected[0], "replacement back-off")
	assert.Contains(t, rep.Rejected[0], "1 replacement(s) in NodePool default")
	assert.Contains(t, f.store.kinds("node/old"), KindDisruptionRejected)

	f.clock.Advance(5 * time.Minute)
	rep = f.runAs("run-3")
	assert.Equal(t, 2, f.launches(), "tried again once the first back-off is over: %+v", rep)

	f.clock.Advance(6 * time.Minute)
	f.runAs("run-4")
	assert.Equal(t, 2, f.launches(), "the second failure doubles the back-off")
	f.clock.Advance(5 * time.Minute)
	f.runAs("run-5")
	assert.Equal(t, 3, f.launches())

	// An expired node of the pool now goes without a replacement: drained at once.
	f.clock.Advance(time.Minute)
	f.launch.setDrift("claim-old", amiDrift())
	f.node("expiring", "medium", "1")
	f.expire("expiring")
	rep = f.runAs("run-6")
	assert.Equal(t, 3, f.launches())
	assert.Equal(t, "Expired", f.terms.claims()["claim-expiring"])
	require.NotEmpty(t, rep.Commands)
	assert.Equal(t, disruption.ActionDelete, rep.Commands[0].Action)
	assert.True(t, strings.Contains(rep.Commands[0].Why, "No replacement is launched"), rep.Commands[0].Why)

	// A node of the pool initializing (the image fixed) ends the back-off.
	f.launch.launchErr = nil
	f.node("fresh", "medium", "3")
	c := f.store.claim("claim-fresh")
	now := f.clock.Now()
	c.InitializedAt = &now
	f.store.setClaim(c)
	f.clock.Advance(time.Minute)
	f.runAs("run-7")
	assert.Equal(t, 4, f.launches(), "launching again")
}
