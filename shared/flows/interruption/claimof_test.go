package interruption_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/interruptiontest"
)

// laggingIndex is the state table as it looks while its instance index has not caught up with a claim
// that just recorded its instance: the base table has it, the index does not.
type laggingIndex struct{ interruption.StateStore }

func (laggingIndex) ClaimByInstance(_ context.Context, id string) (state.Claim, error) {
	return state.Claim{}, state.ErrNotFound
}

// spotWarningFor is the events/ spot warning, about instance id.
func spotWarningFor(t *testing.T, id string) []byte {
	return bytes.ReplaceAll(readEvent(t, "interruption-spot-warning.json"), []byte(spotInstance), []byte(id))
}

// A spot warning for an instance the claims' index does not name yet is still ours: EC2's tags name its
// claim, read consistently, and the notice is handled, not acknowledged as someone else's for 24 hours.
func TestNoticeForAJustRecordedInstanceIsHandled(t *testing.T) {
	e := newEnv(t, envOptions{store: func(w *interruptiontest.World) interruption.StateStore {
		return laggingIndex{w.FunctionStore}
	}})
	node := e.nodeWithPods(t, 1)
	id := e.w.LaunchInstance(t, "default-fresh")
	e.claim(t, "default-fresh", id, node)

	resp := e.handle(t, interruptiontest.Batch("m", spotWarningFor(t, id)))
	assert.Empty(t, resp.BatchItemFailures)
	c := e.getClaim(t, "default-fresh")
	assert.Equal(t, state.Draining, c.Lifecycle, "the notice acted on the claim")
	assert.Equal(t, "SpotInterruption", c.DisruptionReason)
	assert.Len(t, e.w.Drain(t, e.w.TerminationURL), 1)
}

// A notice for an instance that is this cluster's but that its claim has not recorded yet (the launch is
// between CreateFleet and writing the instance id) is retried, then handled once the claim names it.
func TestNoticeBeforeTheLaunchRecordedTheInstanceIsRetried(t *testing.T) {
	e := newEnv(t, envOptions{})
	node := e.nodeWithPods(t, 1)
	_, err := e.w.Store.CreateClaim(context.Background(), state.Claim{Name: "default-early", NodePool: "default", NodeClass: "default",
		InstanceTypes: []string{"m5.large"}, Requests: map[string]string{"cpu": "1"}})
	require.NoError(t, err)
	id := e.w.LaunchInstance(t, "default-early")

	resp := e.handle(t, interruptiontest.Batch("m", spotWarningFor(t, id)))
	require.Len(t, resp.BatchItemFailures, 1, "not acknowledged as someone else's")
	assert.Empty(t, e.w.Drain(t, e.w.TerminationURL))

	// The launch records the instance; the lifecycle registers and initializes the Node.
	for _, step := range []func(*state.Claim){
		func(c *state.Claim) {
			c.Lifecycle, c.InstanceID, c.InstanceType, c.Zone, c.CapacityType = state.Launched, id, "m5.large", "us-west-2a", "spot"
			c.ProviderID = "aws:///us-west-2a/" + id
		},
		func(c *state.Claim) { c.Lifecycle, c.NodeName = state.Registered, node },
		func(c *state.Claim) { c.Lifecycle = state.Initialized },
	} {
		_, err := e.w.Store.UpdateClaim(context.Background(), "default-early", func(c *state.Claim) error { step(c); return nil })
		require.NoError(t, err)
	}
	resp = e.handle(t, interruptiontest.Batch("again", spotWarningFor(t, id)))
	assert.Empty(t, resp.BatchItemFailures)
	assert.Equal(t, state.Draining, e.getClaim(t, "default-early").Lifecycle)
}
