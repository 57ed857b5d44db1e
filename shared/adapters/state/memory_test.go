package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryObservationsRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	first := MemoryObservation{InstanceType: "m5.large", ImageID: "ami-1", MemoryBytes: 7_900 << 20, NominalMiB: 8192,
		Architecture: "amd64", Node: "ip-10-0-0-1"}
	written, err := s.RecordMemory(ctx, first)
	require.NoError(t, err)
	assert.True(t, written, "a new (type, AMI) is written")
	other := MemoryObservation{InstanceType: "m5.large", ImageID: "ami-2", MemoryBytes: 7_950 << 20}
	written, err = s.RecordMemory(ctx, other)
	require.NoError(t, err)
	assert.True(t, written, "another AMI is another item")

	got, err := s.MemoryObservations(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "ami-1", got[0].ImageID)
	assert.Equal(t, int64(7_900<<20), got[0].MemoryBytes)
	assert.Equal(t, int64(8192), got[0].NominalMiB)
	assert.Equal(t, "amd64", got[0].Architecture)
	assert.Equal(t, "ip-10-0-0-1", got[0].Node)
	assert.True(t, got[0].ObservedAt.Equal(clk.Now()))
	assert.Equal(t, clk.Now().Add(MemoryObservationTTL).Unix(), got[0].TTL, "the table's TTL attribute, 60 days on")

	t.Run("a larger value does not replace a smaller one", func(t *testing.T) {
		written, err := s.RecordMemory(ctx, MemoryObservation{InstanceType: "m5.large", ImageID: "ami-1", MemoryBytes: 8_000 << 20})
		require.NoError(t, err)
		assert.False(t, written)
	})
	t.Run("the same value within a day writes nothing", func(t *testing.T) {
		clk.Advance(time.Hour)
		written, err := s.RecordMemory(ctx, first)
		require.NoError(t, err)
		assert.False(t, written)
	})
	t.Run("the same value a day later pushes the expiry back", func(t *testing.T) {
		clk.Advance(MemoryRefreshAfter)
		written, err := s.RecordMemory(ctx, first)
		require.NoError(t, err)
		assert.True(t, written)
		got, err := s.MemoryObservations(ctx)
		require.NoError(t, err)
		assert.Equal(t, clk.Now().Add(MemoryObservationTTL).Unix(), got[0].TTL)
	})
	t.Run("a smaller value replaces the stored one", func(t *testing.T) {
		written, err := s.RecordMemory(ctx, MemoryObservation{InstanceType: "m5.large", ImageID: "ami-1", MemoryBytes: 7_800 << 20, Node: "ip-10-0-0-2"})
		require.NoError(t, err)
		assert.True(t, written)
		got, err := s.MemoryObservations(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(7_800<<20), got[0].MemoryBytes)
		assert.Equal(t, "ip-10-0-0-2", got[0].Node)
	})
	t.Run("expired observations are not read", func(t *testing.T) {
		clk.Advance(MemoryObservationTTL - time.Hour) // ami-2's was recorded a day and an hour before ami-1's last
		got, err := s.MemoryObservations(ctx)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "ami-1", got[0].ImageID)
	})
	t.Run("bad input names the fields", func(t *testing.T) {
		_, err := s.RecordMemory(ctx, MemoryObservation{InstanceType: "m5.large", MemoryBytes: 1})
		require.ErrorIs(t, err, ErrInvalid)
		assert.Contains(t, err.Error(), "image id")
	})
}
