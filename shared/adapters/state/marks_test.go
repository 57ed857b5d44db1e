package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarkOnlyMovesForward(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)

	at, err := s.Mark(ctx, "provisioner-snapshot")
	require.NoError(t, err)
	assert.True(t, at.IsZero(), "a mark never set reads as the zero time")

	t1 := time.UnixMilli(1_700_000_000_000)
	require.NoError(t, s.AdvanceMark(ctx, "provisioner-snapshot", t1))
	require.NoError(t, s.AdvanceMark(ctx, "provisioner-snapshot", t1.Add(-time.Second)), "an older time is not an error")
	at, err = s.Mark(ctx, "provisioner-snapshot")
	require.NoError(t, err)
	assert.True(t, at.Equal(t1), "the older time does not move the mark back: %s", at)

	require.NoError(t, s.AdvanceMark(ctx, "provisioner-snapshot", t1.Add(1500*time.Millisecond)))
	at, err = s.Mark(ctx, "provisioner-snapshot")
	require.NoError(t, err)
	assert.True(t, at.Equal(t1.Add(1500*time.Millisecond)), "millisecond precision: %s", at)

	other, err := s.Mark(ctx, "other")
	require.NoError(t, err)
	assert.True(t, other.IsZero(), "marks are independent")
}
