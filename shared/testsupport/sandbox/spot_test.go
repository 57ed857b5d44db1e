package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpotInterruptionReplacesFirstAndLosesNothing(t *testing.T) {
	sb := start(t)
	rep, err := sb.SpotInterruption(context.Background(), ScaleUpOptions{Replicas: 6, Timeout: 2 * time.Minute})
	require.NoError(t, err)
	t.Logf("report: %+v", rep)
	if !assert.Zero(t, rep.PodsLost) {
		dump(t, sb)
	}
	assert.Equal(t, 6, rep.PodsOnInterruptedNode)
	assert.Equal(t, 6, rep.PodsRescheduled)
	assert.Zero(t, rep.DuplicateEventsActedOn, "two deliveries, one disruption")
	assert.GreaterOrEqual(t, rep.ReplacementLaunchedAfterSeconds, 0.0, "a replacement was launched")
	assert.GreaterOrEqual(t, rep.InterruptedNodeGoneAfterSeconds, 0.0, "the node went")
	assert.Less(t, rep.InterruptedNodeGoneAfterSeconds, SpotNotice.Seconds())
	assert.False(t, rep.ReclaimedByEC2, "Nodewright terminated the instance before EC2 had to")
	assert.Zero(t, rep.LeakedInstances)
	assert.Empty(t, rep.Leaks)
	assert.Empty(t, rep.Errors)
	assert.Equal(t, 1, rep.Nodes, "the replacement alone remains")

	assert.Equal(t, 6, rep.PodsOnNodeAtReplacement, "replacement first: no pod had left when it launched")
	require.Len(t, sb.Launches(), 2, "the setup's node and its replacement, nothing else")
}
