package state

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/crash"
)

// slowLeaser grants every lease and fails every release as a table that answers too late would.
type slowLeaser struct{ released int }

func (l *slowLeaser) AcquireLease(_ context.Context, name, holder string, ttl time.Duration) (Lease, error) {
	return Lease{Name: name, Holder: holder, Token: 1, ExpiresAt: time.Unix(1000, 0).Add(ttl)}, nil
}

func (l *slowLeaser) ReleaseLease(context.Context, Lease) error {
	l.released++
	return context.DeadlineExceeded
}

func TestALeaseNotGivenBackIsAWarningNotTheRunsError(t *testing.T) {
	l := &slowLeaser{}
	ran := false
	run, err := RunLeased(context.Background(), l, "lifecycle", "run-1", "the lifecycle lease", time.Minute,
		func() error { ran = true; return nil })
	require.NoError(t, err, "the body did its work: a release cut off does not fail the run")
	assert.True(t, ran)
	assert.True(t, run.Held)
	assert.Equal(t, 1, l.released, "the release was tried")
	require.Error(t, run.NotReleased)
	assert.ErrorIs(t, run.NotReleased, context.DeadlineExceeded)
	assert.Contains(t, run.NotReleased.Error(), "the lifecycle lease")
}

func TestARunsPanicIsItsErrorAndTheLeaseIsStillGivenBack(t *testing.T) {
	l := &slowLeaser{}
	run, err := RunLeased(context.Background(), l, "provisioner", "run-1", "the provisioner lease", time.Minute,
		func() error { panic("bug") })
	pe, ok := crash.Is(err)
	require.True(t, ok, "the panic comes back as the run's error, got %v", err)
	assert.Equal(t, "bug", pe.Value)
	assert.True(t, run.Held)
	assert.Equal(t, 1, l.released)
}

func TestTheBodysErrorIsTheRunsError(t *testing.T) {
	want := errors.New("claims unreadable")
	run, err := RunLeased(context.Background(), &slowLeaser{}, "x", "run-1", "the x lease", time.Minute,
		func() error { return want })
	assert.ErrorIs(t, err, want)
	assert.NotErrorIs(t, err, context.DeadlineExceeded, "the release's failure is kept apart")
	assert.Error(t, run.NotReleased)
}
