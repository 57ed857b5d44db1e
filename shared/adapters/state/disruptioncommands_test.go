package state

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDisruptionCommands(t *testing.T) {
	s, clk := newStore(t)
	ctx := context.Background()
	c, err := s.CreateDisruptionCommand(ctx, DisruptionCommand{ID: "c1", Phase: CommandLaunching, Reason: "Underutilized",
		Candidates: []DisruptedClaim{{Claim: "a-1", Node: "n1", NodePool: "a"}}, Replacements: []string{"a-2"}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, c.Version)
	_, err = s.CreateDisruptionCommand(ctx, DisruptionCommand{ID: "c1", Phase: CommandLaunching})
	assert.True(t, IsAlreadyExists(err), "ids are unique")

	c.Phase = CommandTerminating
	c2, err := s.PutDisruptionCommand(ctx, c)
	require.NoError(t, err)
	assert.EqualValues(t, 2, c2.Version)
	_, err = s.PutDisruptionCommand(ctx, c) // stale version
	assert.True(t, IsConflict(err), "optimistic locking")

	c2.Phase = CommandDone
	done, err := s.PutDisruptionCommand(ctx, c2)
	require.NoError(t, err)
	require.NotNil(t, done.FinishedAt)
	list, err := s.ListDisruptionCommands(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, []string{"a-2"}, list[0].Replacements)
	assert.Equal(t, CommandDone, list[0].Phase)

	clk.Advance(FinishedCommandRetention + time.Minute)
	list, err = s.ListDisruptionCommands(ctx)
	require.NoError(t, err)
	assert.Empty(t, list, "finished commands expire")
}

func TestDisruptionReservations(t *testing.T) {
	s, clk := newStore(t)
	ctx := context.Background()
	require.NoError(t, s.ReserveDisruption(ctx, "a", "a-1", 3))
	clk.Advance(time.Second)
	require.NoError(t, s.ReserveDisruption(ctx, "a", "a-2", 3))
	require.NoError(t, s.ReserveDisruption(ctx, "b", "b-1", 3))
	got, err := s.DisruptionReservations(ctx, "a")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "a-1", got[0].Claim)
	assert.Equal(t, newClock().Now(), got[0].At.UTC())
	require.NoError(t, s.ReleaseDisruption(ctx, "a", "a-1"))
	got, err = s.DisruptionReservations(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, []DisruptionReservation{{Claim: "a-2", At: got[0].At}}, got)
}
