package disruptionrun

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnotherCommandStartsOnlyIfTheLastOneWouldFit: at 150,000 pods a command's reads take tens of
// seconds. A first command that took 90 s (the run's whole read, which advance and its decision share,
// and its validation's read, 45 s each) leaves 110 s of a 200 s run; a fixed margin (validation delay
// and command margin, 25 s here) would start another, to be cut off by the deadline.
// The runner starts one only if the time left covers the measured command with headroom (135 s).
func TestAnotherCommandStartsOnlyIfTheLastOneWouldFit(t *testing.T) {
	f := newFixture(t, "100%")
	f.clock.t = time.Now() // the context's own timer must not fire during the test
	f.node("empty-a", "medium")
	f.cluster.onRead = func(*fakeCluster, int) { f.clock.Advance(45 * time.Second) }
	ctx, cancel := context.WithDeadline(context.Background(), f.clock.Now().Add(200*time.Second))
	defer cancel()

	rep, err := f.runner.Run(ctx, "run")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1)
	assert.Equal(t, 2, f.cluster.reads, "the run's read (advance and the decision), the validation's; none for a command that cannot fit")
	last, ok := f.runner.commands.Last()
	require.True(t, ok)
	assert.Equal(t, 90*time.Second, last)
}

// TestAColdRunnerAssumesTheConservativeEstimate: with nothing measured, a command needs
// ColdCommandEstimate with headroom (90 s), more than the fixed margin.
func TestAColdRunnerAssumesTheConservativeEstimate(t *testing.T) {
	f := newFixture(t, "100%")
	f.clock.t = time.Now()
	f.node("empty-a", "medium")
	ctx, cancel := context.WithDeadline(context.Background(), f.clock.Now().Add(80*time.Second))
	defer cancel()
	rep, err := f.runner.Run(ctx, "run")
	require.NoError(t, err)
	assert.Contains(t, rep.Skipped, "deadline", "80 s is more than the 25 s margin, less than a cold command's 90 s")
	assert.Equal(t, 1, f.cluster.reads, "only the run's first read, before any command")

	f.runner.commands.Observe(10 * time.Second) // a warm process's sandbox-sized commands
	rep, err = f.runner.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Len(t, rep.Commands, 1)
}
