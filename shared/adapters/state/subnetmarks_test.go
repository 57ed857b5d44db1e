package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnavailableSubnetsExpireAndStayApartFromOfferings(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	require.NoError(t, s.MarkSubnetUnavailable(ctx, "subnet-a1", "us-east-1a", "InsufficientFreeAddressesInSubnet", UnavailableCapacityTTL))
	clk.Advance(time.Minute)
	require.NoError(t, s.MarkSubnetUnavailable(ctx, "subnet-b1", "us-east-1b", "InsufficientFreeAddressesInSubnet", UnavailableCapacityTTL))

	got, err := s.UnavailableSubnets(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)
	offerings, err := s.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Empty(t, offerings, "a full subnet is not an offering without capacity")

	clk.Advance(2*time.Minute + time.Second) // subnet-a1's three minutes are over
	got, err = s.UnavailableSubnets(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "subnet-b1", got[0].SubnetID)
	assert.Equal(t, "us-east-1b", got[0].Zone)
	assert.Equal(t, "InsufficientFreeAddressesInSubnet", got[0].Reason)

	require.NoError(t, s.MarkSubnetUnavailable(ctx, "subnet-b1", "us-east-1b", "InsufficientFreeAddressesInSubnet", UnavailableCapacityTTL))
	clk.Advance(2 * time.Minute)
	got, err = s.UnavailableSubnets(ctx)
	require.NoError(t, err)
	assert.Len(t, got, 1, "marking again extends the window")

	assert.ErrorContains(t, s.MarkSubnetUnavailable(ctx, "", "us-east-1a", "x", UnavailableCapacityTTL), "subnetId")
}
