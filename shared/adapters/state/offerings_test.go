package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnavailableOfferingsExpire(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	spotA := Offering{InstanceType: "m7g.large", Zone: "us-east-1a", CapacityType: "spot"}
	odB := Offering{InstanceType: "c7g.xlarge", Zone: "us-east-1b", CapacityType: "on-demand"}
	require.NoError(t, s.MarkUnavailable(ctx, spotA, "InsufficientInstanceCapacity", UnavailableCapacityTTL))
	clk.Advance(time.Minute)
	require.NoError(t, s.MarkUnavailable(ctx, odB, "InsufficientInstanceCapacity", UnavailableCapacityTTL))

	got, err := s.UnavailableOfferings(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)

	clk.Advance(2*time.Minute + time.Second) // spotA's three minutes are over
	got, err = s.UnavailableOfferings(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, odB, got[0].Offering)
	assert.Equal(t, "InsufficientInstanceCapacity", got[0].Reason)

	require.NoError(t, s.MarkUnavailable(ctx, odB, "InsufficientInstanceCapacity", UnavailableCapacityTTL))
	clk.Advance(2 * time.Minute)
	got, err = s.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1, "marking again extends the window")
}
