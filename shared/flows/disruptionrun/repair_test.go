package disruptionrun

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// repairRequest is node repair's request for a node Ready=False past its toleration.
func repairRequest() *state.DisruptionRequest {
	return &state.DisruptionRequest{Reason: "Ready=False for 31m0s (tolerated for 30m0s)", RequestedAt: start, By: state.RepairRequester,
		Unhealthy: &state.UnhealthyCondition{Type: "Ready", Status: "False", Since: start.Add(-31 * time.Minute), Toleration: 30 * time.Minute}}
}

// repairFixture has two nodes under a zero budget, each with a pod that fits nowhere else, and node
// repair's request on claim-sick; a run takes one command.
func repairFixture(t *testing.T) *fixture {
	f := newFixture(t, "0")
	f.node("sick", "medium", "3")
	f.node("busy", "medium", "3")
	c := f.store.claim("claim-sick")
	c.DisruptionRequest = repairRequest()
	f.store.setClaim(c)
	f.runner.cfg.MaxCommands = 1
	return f
}

// Node repair's request disrupts the node for the reason Unhealthy, whatever the budget (0 here):
// replacement capacity first, and the node handed over once it is up.
func TestRepairRequestReplacesTheNodeFirstForTheReasonUnhealthy(t *testing.T) {
	f := repairFixture(t)
	rep := f.run()

	require.Len(t, rep.Commands, 1)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonUnhealthy, cmd.Reason)
	assert.Equal(t, disruption.MethodForceful, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action, "its pod fits nowhere else: capacity launches first")
	assert.Contains(t, cmd.Why, "unhealthy: sick Ready=False for 31m0s")
	assert.Empty(t, f.terms.claims(), "not handed over before its replacement is up")
	rec := f.store.command()
	f.initialize(rec.Replacements[0])
	f.launch.prepareErr = errors.New("stop after advancing")
	f.run()
	assert.Equal(t, map[string]string{"claim-sick": "Unhealthy"}, f.terms.claims())
}

// A repair does not wait forever behind a replacement that cannot launch: the node is drained anyway.
func TestRepairDrainsTheNodeWhenItsReplacementFails(t *testing.T) {
	f := repairFixture(t)
	f.launch.launchErr = errors.New("InsufficientInstanceCapacity")
	f.run()
	assert.Equal(t, map[string]string{"claim-sick": "Unhealthy"}, f.terms.claims())
	got := f.store.command()
	assert.Equal(t, state.CommandTerminating, got.Phase, "not rolled back: %s", got.Outcome)
	assert.Contains(t, f.store.kinds("node/sick"), KindReplacementFailed)
}
