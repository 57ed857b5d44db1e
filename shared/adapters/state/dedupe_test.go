package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEventDedupe(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	begin := func() Outcome {
		t.Helper()
		o, err := s.BeginEvent(ctx, "interruption", "evt-1", "a", time.Minute)
		require.NoError(t, err)
		return o
	}

	assert.Equal(t, Process, begin())
	assert.Equal(t, InProgress, begin(), "a duplicate while the first is processing")
	require.NoError(t, s.CompleteEvent(ctx, "interruption", "evt-1", time.Hour))
	assert.Equal(t, Done, begin(), "a duplicate after completion")
	clk.Advance(30 * time.Minute)
	assert.Equal(t, Done, begin(), "still inside the dedupe window")
	clk.Advance(31 * time.Minute)
	assert.Equal(t, Process, begin(), "the window is over: the id is new again")

	other, err := s.BeginEvent(ctx, "webhook", "evt-1", "a", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Process, other, "scopes do not share ids")
}

func TestCrashedProcessingIsRetried(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	o, err := s.BeginEvent(ctx, "interruption", "evt-2", "a", time.Minute)
	require.NoError(t, err)
	require.Equal(t, Process, o)
	// The handler dies without CompleteEvent; the redelivery comes after the processing window.
	clk.Advance(61 * time.Second)
	o, err = s.BeginEvent(ctx, "interruption", "evt-2", "a", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Process, o, "an event whose handler crashed is processed again, never lost")
}

func TestDuplicateStormIsProcessedOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	outcomes := make([]Outcome, 40)
	errs := race(len(outcomes), func(i int) error {
		var err error
		outcomes[i], err = s.BeginEvent(ctx, "interruption", "storm", fmt.Sprint(i), time.Minute)
		return err
	})
	process := 0
	for i, err := range errs {
		require.NoError(t, err)
		if outcomes[i] == Process {
			process++
		}
	}
	assert.Equal(t, 1, process)
}

// TestReleasedEventIsClaimedAgainAtOnce: a failed handler gives its claim back, so the retry need not
// wait for the processing window; another owner's claim and a done event are left alone.
func TestReleasedEventIsClaimedAgainAtOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	begin := func(owner string) Outcome {
		t.Helper()
		o, err := s.BeginEvent(ctx, "interruption", "evt-3", owner, time.Minute)
		require.NoError(t, err)
		return o
	}
	require.Equal(t, Process, begin("first"))
	require.NoError(t, s.ReleaseEvent(ctx, "interruption", "evt-3", "someone-else"))
	assert.Equal(t, InProgress, begin("second"), "only the owner releases its claim")
	require.NoError(t, s.ReleaseEvent(ctx, "interruption", "evt-3", "first"))
	assert.Equal(t, Process, begin("second"), "released: claimed again at once")
	require.NoError(t, s.CompleteEvent(ctx, "interruption", "evt-3", time.Hour))
	require.NoError(t, s.ReleaseEvent(ctx, "interruption", "evt-3", "second"))
	assert.Equal(t, Done, begin("third"), "a done event stays done")
	require.NoError(t, s.ReleaseEvent(ctx, "interruption", "never-seen", "x"), "nothing to release is not an error")
}
