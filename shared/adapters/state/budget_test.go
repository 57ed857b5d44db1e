package state

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDisruptionBudgetLedger(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	require.NoError(t, s.ReserveDisruption(ctx, "default", "a", 2))
	require.NoError(t, s.ReserveDisruption(ctx, "default", "b", 2))
	assert.ErrorIs(t, s.ReserveDisruption(ctx, "default", "c", 2), ErrBudgetExhausted)
	require.NoError(t, s.ReserveDisruption(ctx, "default", "a", 2), "reserving twice is idempotent")

	n, err := s.DisruptionsInFlight(ctx, "default")
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	require.NoError(t, s.ReleaseDisruption(ctx, "default", "a"))
	require.NoError(t, s.ReleaseDisruption(ctx, "default", "a"), "releasing twice does nothing")
	require.NoError(t, s.ReserveDisruption(ctx, "default", "c", 2))
	n, err = s.DisruptionsInFlight(ctx, "default")
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	assert.ErrorIs(t, s.ReserveDisruption(ctx, "other", "x", 0), ErrBudgetExhausted)
	n, err = s.DisruptionsInFlight(ctx, "other")
	require.NoError(t, err)
	assert.Zero(t, n)
}

func TestOverlappingTicksNeverExceedTheBudget(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	const allowed = 3
	errs := race(12, func(i int) error { return s.ReserveDisruption(ctx, "default", fmt.Sprintf("claim-%d", i), allowed) })
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		assert.ErrorIs(t, err, ErrBudgetExhausted)
	}
	assert.Equal(t, allowed, ok, "every slot is taken, none twice")
	n, err := s.DisruptionsInFlight(ctx, "default")
	require.NoError(t, err)
	assert.Equal(t, ok, n, "the counter matches the reservations that succeeded")
	assert.Positive(t, n)
}
