package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLeaseTakeoverAndFencing(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)

	a, err := s.AcquireLease(ctx, "provisioner", "invocation-a", 30*time.Second)
	require.NoError(t, err)
	assert.EqualValues(t, 1, a.Token)

	_, err = s.AcquireLease(ctx, "provisioner", "invocation-b", 30*time.Second)
	assert.ErrorIs(t, err, ErrLeaseHeld, "b must wait while a holds the lease")

	a, err = s.RenewLease(ctx, a, 30*time.Second)
	require.NoError(t, err)

	clk.Advance(31 * time.Second) // a paused past its lease
	b, err := s.AcquireLease(ctx, "provisioner", "invocation-b", 30*time.Second)
	require.NoError(t, err)
	assert.EqualValues(t, 2, b.Token, "a new term has a larger fencing token")

	_, err = s.RenewLease(ctx, a, 30*time.Second)
	assert.ErrorIs(t, err, ErrLeaseLost, "a's stale token must not extend b's lease")
	assert.ErrorIs(t, s.ReleaseLease(ctx, a), ErrLeaseLost, "a must not release b's lease")

	require.NoError(t, s.ReleaseLease(ctx, b))
	c, err := s.AcquireLease(ctx, "provisioner", "invocation-c", 30*time.Second)
	require.NoError(t, err, "a released lease is free at once")
	assert.EqualValues(t, 3, c.Token)
}

func TestConcurrentLeaseAcquisitionHasOneWinner(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	errs := race(10, func(i int) error {
		_, err := s.AcquireLease(ctx, "provisioner", fmt.Sprintf("invocation-%d", i), time.Minute)
		return err
	})
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else {
			assert.ErrorIs(t, err, ErrLeaseHeld)
		}
	}
	assert.Equal(t, 1, wins)
}
