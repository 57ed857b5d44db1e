package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One sandbox serves the remaining loop tests in order: each step starts from the state the last left.
func TestLoopSurvivesFloodAndCrash(t *testing.T) {
	sb := start(t)
	ctx := context.Background()

	t.Run("1000 triggers coalesce into a handful of solves", func(t *testing.T) {
		before := sb.Stats()
		require.NoError(t, sb.FloodProvisioningQueue(ctx, 1000))
		require.Eventually(t, func() bool {
			n, err := sb.QueueDepth(ctx, sb.Queues.Provisioning)
			return err == nil && n == 0
		}, 3*time.Minute, 250*time.Millisecond, "the provisioner drains the queue")
		after := sb.Stats()
		invocations, solves := after.ProvisionerInvocations-before.ProvisionerInvocations, after.Solves-before.Solves
		t.Logf("1000 messages: %d invocations, %d solves, %d coalesced", invocations, solves, after.Coalesced-before.Coalesced)
		assert.GreaterOrEqual(t, invocations, 100, "ten messages per batch at most")
		assert.LessOrEqual(t, solves, 8, "a handful of solves")
		assert.Positive(t, solves)
		assert.Empty(t, sb.Launches(), "no pod is pending: nothing to launch")
	})

	t.Run("a crash after CreateFleet converges to one instance and no leak", func(t *testing.T) {
		sb.CrashAfterNextLaunch()
		rep, err := sb.ScaleUp(ctx, ScaleUpOptions{Replicas: 3, Timeout: 2 * time.Minute})
		require.NoError(t, err)
		t.Logf("report: %+v", rep)
		if !assert.Equal(t, 3, rep.PodsBound, "every pod bound on the adopted instance") {
			dump(t, sb)
		}
		launches := sb.Launches()
		require.NotEmpty(t, launches)
		assert.Len(t, launches, 1, "the crashed launch is adopted, not repeated: %+v", launches)
		assert.Equal(t, 1, rep.Nodes)
		assert.Zero(t, rep.LeakedInstances)
		assert.Empty(t, rep.Leaks)
		var crashed int
		for _, e := range rep.Errors {
			if assert.Contains(t, e, CrashedAfterCreateFleet, "the only error is the injected crash") {
				crashed++
			}
		}
		assert.Equal(t, 1, crashed)
		claims, err := sb.Store.ListClaims(ctx)
		require.NoError(t, err)
		require.Len(t, claims, 1)
		assert.Equal(t, launches[0].InstanceIDs[0], claims[0].InstanceID, "the claim carries the instance the crashed run launched")
	})

}
