package sandbox

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A small burst: 60 pods of 700m need 12 four-vCPU nodes, launched in fewer CreateFleet calls than nodes.
func TestBurstLaunchesBatchedAndBindsEveryPod(t *testing.T) {
	sb := start(t)
	rep, err := sb.Burst(context.Background(), BurstOptions{Replicas: 60, Timeout: 3 * time.Minute})
	require.NoError(t, err)
	t.Logf("report: %+v", rep)
	if !assert.Equal(t, 60, rep.PodsBound, "every pod bound") || os.Getenv("SANDBOX_DUMP") != "" {
		dump(t, sb)
	}
	assert.Equal(t, 60, rep.PodsRequested)
	assert.GreaterOrEqual(t, rep.Nodes, 12, "five 700m pods fit a 4-vCPU node")
	assert.Less(t, rep.CreateFleetCalls, rep.Nodes, "launches are batched")
	assert.Equal(t, rep.Nodes, rep.InstancesLaunched)
	for _, n := range rep.InstanceTypes {
		assert.Positive(t, n)
	}
	assert.Zero(t, rep.LeakedInstances)
	assert.Empty(t, rep.Leaks)
	assert.Zero(t, rep.DuplicateLaunches)
	assert.Empty(t, rep.Errors)
	assert.Positive(t, rep.LaunchesIssuedAfterSeconds)
	assert.GreaterOrEqual(t, rep.LastUnschedulableAfterSeconds, 0.0)
	assert.True(t, rep.Worked())
}
