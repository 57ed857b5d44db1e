package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPoolAbsenceCountsPassesAndStartsOverWhenThePoolIsBack(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

	a, err := s.NotePoolAbsent(ctx, "gpu", t0)
	require.NoError(t, err)
	assert.Equal(t, PoolAbsence{NodePool: "gpu", Since: t0, Passes: 1}, normalize(a))
	a, err = s.NotePoolAbsent(ctx, "gpu", t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, PoolAbsence{NodePool: "gpu", Since: t0, Passes: 2}, normalize(a), "the first pass's time stays")

	list, err := s.PoolAbsences(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "gpu", list[0].NodePool)

	require.NoError(t, s.ClearPoolAbsence(ctx, "gpu"))
	list, err = s.PoolAbsences(ctx)
	require.NoError(t, err)
	assert.Empty(t, list, "a pool back in the configuration is no longer missing")
	a, err = s.NotePoolAbsent(ctx, "gpu", t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, PoolAbsence{NodePool: "gpu", Since: t0.Add(time.Hour), Passes: 1}, normalize(a), "a new absence starts over")
}

func normalize(a PoolAbsence) PoolAbsence {
	a.Since = a.Since.UTC()
	return a
}
