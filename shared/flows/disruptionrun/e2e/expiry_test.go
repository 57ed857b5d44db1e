package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

// Expiry is a hard lifetime: an expired node whose replacement is removed before it initializes (its
// instance died at launch, say) is drained anyway, not kept; the failure is recorded on the command, and
// the next expired node of the pool, inside the back-off, is drained without a replacement launched.
func TestExpiredNodeIsDrainedAfterItsReplacementFails(t *testing.T) {
	w := newWorld(t, "0")
	old := w.node("old", "m5.large", "2", nil, "1500m")
	next := w.node("next", "m5.large", "2", nil, "1500m")
	w.node("busy", "m5.large", "2", nil, "1500m")
	w.expire(old)
	r := w.runner("", nil)

	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	assert.Equal(t, disruption.ActionReplace, rep.Commands[0].Action)
	c, repl := w.replacementOf("claim-" + old)
	assert.Empty(t, w.terminationRequests(), "nothing drains before the replacement is up")

	// The replacement goes before it initializes, as the lifecycle removes a claim whose instance died.
	_, err = w.store.UpdateClaim(w.ctx, repl.Name, func(cl *state.Claim) error { cl.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)
	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"claim-" + old: "Expired"}, w.terminationRequests(), "the expired node drains anyway")
	commands, err := w.store.ListDisruptionCommands(w.ctx)
	require.NoError(t, err)
	require.Len(t, commands, 1)
	assert.Equal(t, c.ID, commands[0].ID)
	assert.Equal(t, state.CommandTerminating, commands[0].Phase, "not rolled back: %s", commands[0].Outcome)
	require.NotNil(t, commands[0].ReplacementFailure)
	assert.Equal(t, "default", commands[0].ReplacementFailure.NodePool)
	assert.Equal(t, repl.ImageID, commands[0].ReplacementFailure.ImageID)
	assert.Contains(t, w.decisionKinds("node/"+old), disruptionrun.KindReplacementFailed)
	assert.True(t, w.tainted(old), "it stays tainted: the termination flow owns it")

	// Within the back-off, the next expired node is drained at once, with no replacement launched.
	w.expire(next)
	before := len(w.claimedInstances())
	rep, err = r.Run(w.ctx, "run-3")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonExpired, cmd.Reason)
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Contains(t, cmd.Why, "No replacement is launched")
	assert.Equal(t, map[string]string{"claim-" + next: "Expired"}, w.terminationRequests())
	assert.Len(t, w.claimedInstances(), before, "nothing launched")
}
