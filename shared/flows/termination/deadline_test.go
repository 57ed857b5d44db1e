package termination

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestEarliestDeadline(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	spot := t0.Add(2 * time.Minute)
	grace := 10 * time.Minute
	short := time.Minute
	assert.Nil(t, earliestDeadline(nil, nil, &t0, nil), "no deadline, no grace period")
	assert.Equal(t, &spot, earliestDeadline(&spot, nil, &t0, &grace), "the spot notice is earlier")
	assert.Equal(t, t0.Add(time.Minute), *earliestDeadline(&spot, nil, &t0, &short), "the grace period is earlier")
	assert.Equal(t, t0.Add(grace), *earliestDeadline(nil, nil, &t0, &grace))
	assert.Nil(t, earliestDeadline(nil, nil, nil, &grace), "not draining yet: the grace period has not started")
	// A request sent before a spot notice arrived (a rebalance replacement) learns it from the claim.
	assert.Equal(t, &spot, earliestDeadline(nil, &spot, &t0, &grace), "the claim's GoneBy rules a request without one")
	later := spot.Add(time.Minute)
	assert.Equal(t, &spot, earliestDeadline(&later, &spot, &t0, &grace), "the earlier of request and claim")
	assert.Equal(t, &spot, earliestDeadline(&spot, &later, &t0, &grace))
}

func TestTerminationGracePeriodOfStoredNodePool(t *testing.T) {
	got, err := terminationGracePeriod(state.ConfigItem{Name: "default",
		Spec: `{"metadata":{"name":"default"},"spec":{"template":{"spec":{"terminationGracePeriod":"1h30m"}}}}`})
	require.NoError(t, err)
	assert.Equal(t, 90*time.Minute, *got)

	got, err = terminationGracePeriod(state.ConfigItem{Name: "default", Spec: `{"spec":{"template":{"spec":{}}}}`})
	require.NoError(t, err)
	assert.Nil(t, got, "unset means no bound")

	_, err = terminationGracePeriod(state.ConfigItem{Name: "broken", Spec: `{"spec":`})
	assert.ErrorContains(t, err, "NodePool broken")
	_, err = terminationGracePeriod(state.ConfigItem{Name: "odd", Spec: `{"spec":{"template":{"spec":{"terminationGracePeriod":"1d"}}}}`})
	assert.ErrorContains(t, err, "terminationGracePeriod")
}

// The drain is bounded by the terminationGracePeriod stamped on the claim at launch, not by a later edit
// of its NodePool; a claim launched before it was stamped falls back to its NodePool's.
func TestDeadlineUsesTheClaimsTerminationGracePeriod(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	store := &claimStore{pools: map[string]state.ConfigItem{"default": {Kind: state.KindNodePool, Name: "default",
		Spec: `{"metadata":{"name":"default"},"spec":{"template":{"spec":{"terminationGracePeriod":"2h"}}}}`}}}
	s := NewService(Config{QueueURL: "http://queue"}, Deps{Store: store})
	stamped := 30 * time.Minute

	t.Run("stamped at launch", func(t *testing.T) {
		c := state.Claim{Name: "default-abc", NodePool: "default", DrainingAt: &t0, TerminationGracePeriod: &stamped}
		got, err := s.deadline(ctx, c, Request{})
		require.NoError(t, err)
		require.NotNil(t, got)
		assert.Equal(t, t0.Add(30*time.Minute), *got, "the claim's 30m, not the NodePool's 2h edited since")
	})
	t.Run("stamped at launch, NodePool gone", func(t *testing.T) {
		c := state.Claim{Name: "gone-abc", NodePool: "gone", DrainingAt: &t0, TerminationGracePeriod: &stamped}
		got, err := s.deadline(ctx, c, Request{})
		require.NoError(t, err)
		require.NotNil(t, got)
		assert.Equal(t, t0.Add(30*time.Minute), *got)
	})
	t.Run("launched before stamping: the NodePool's", func(t *testing.T) {
		c := state.Claim{Name: "default-old", NodePool: "default", DrainingAt: &t0}
		got, err := s.deadline(ctx, c, Request{})
		require.NoError(t, err)
		require.NotNil(t, got)
		assert.Equal(t, t0.Add(2*time.Hour), *got)
	})
	t.Run("neither: no bound", func(t *testing.T) {
		c := state.Claim{Name: "gone-old", NodePool: "gone", DrainingAt: &t0}
		got, err := s.deadline(ctx, c, Request{})
		require.NoError(t, err)
		assert.Nil(t, got)
	})
}

// A node drained for node repair has its deadline when its drain started, as Karpenter's repair stamps
// the termination time at once: its pods are deleted whatever PDBs and do-not-disrupt say.
func TestRepairedNodesDrainIsForced(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := NewService(Config{QueueURL: "http://queue"}, Deps{Store: &claimStore{}})
	stamped := 30 * time.Minute
	c := state.Claim{Name: "default-sick", NodePool: "default", DrainingAt: &t0, TerminationGracePeriod: &stamped, DisruptionReason: "Unhealthy"}
	got, err := s.deadline(ctx, c, Request{Reason: "Unhealthy"})
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, t0, *got)

	c.DisruptionReason = "Drifted"
	got, err = s.deadline(ctx, c, Request{Reason: "Drifted"})
	require.NoError(t, err)
	assert.Equal(t, t0.Add(stamped), *got, "other reasons keep their grace period")
}
