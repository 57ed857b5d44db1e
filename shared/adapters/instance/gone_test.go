package instance

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// EC2's DescribeInstances is eventually consistent: right after a launch it may answer
// InvalidInstanceID.NotFound for an instance that runs. Within NotFoundGrace of the launch that answer
// is unknown, not terminated; after it (or for an instance launched at an unknown time) it is gone.
func TestNotFoundRightAfterTheLaunchIsNotTerminated(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	l := New(n.client, "demo")
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return now }
	const unknown = "i-0123456789abcdef0" // moto answers InvalidInstanceID.NotFound, as EC2 does for a fresh id

	gone, err := l.Terminated(ctx, unknown, now.Add(-30*time.Second))
	require.NoError(t, err)
	assert.False(t, gone, "30 s after its launch, an instance EC2 does not know yet may be running")
	gone, err = l.Terminated(ctx, unknown, now.Add(-NotFoundGrace+time.Second))
	require.NoError(t, err)
	assert.False(t, gone)

	gone, err = l.Terminated(ctx, unknown, now.Add(-NotFoundGrace))
	require.NoError(t, err)
	assert.True(t, gone, "long after its launch, EC2 not knowing the instance means it is gone")
	gone, err = l.Terminated(ctx, unknown, time.Time{})
	require.NoError(t, err)
	assert.True(t, gone, "launched at an unknown time: as before")

	running := runTagged(t, n, map[string]string{TagCluster: "demo"})
	gone, err = l.Terminated(ctx, running, now.Add(-time.Hour))
	require.NoError(t, err)
	assert.False(t, gone)
	require.NoError(t, l.Terminate(ctx, running))
	gone, err = l.Terminated(ctx, running, now.Add(-30*time.Second))
	require.NoError(t, err)
	assert.True(t, gone, "terminated is terminated, however fresh")
}
