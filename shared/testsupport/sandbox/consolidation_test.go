package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// After a scale-in the disruption function removes or replaces the nodes left empty or underused:
// fewer nodes, lower cost, no pod lost, nothing leaked, never more nodes disrupting than the budget.
func TestConsolidationRemovesNodesWithinTheBudgetAfterAScaleIn(t *testing.T) {
	sb := start(t)
	rep, err := sb.Consolidation(context.Background(), ConsolidationOptions{ScaleUpOptions: ScaleUpOptions{Timeout: 2 * time.Minute}})
	require.NoError(t, err)
	t.Logf("report: %+v", rep)
	require.Equal(t, rep.Setup.PodsRequested, rep.Setup.PodsRunning, "the scale-up ran every pod")
	assert.GreaterOrEqual(t, rep.NodesBefore, 3, "the scale-up built several nodes")
	assert.Less(t, rep.NodesAfter, rep.NodesBefore, "fewer nodes")
	assert.Less(t, rep.CostAfterPerHour, rep.CostBeforePerHour, "lower cost")
	assert.NotEmpty(t, rep.Commands, "commands executed")
	for _, c := range rep.Commands {
		assert.NotEmpty(t, c.Reason, "command %s has a reason", c.ID)
		assert.NotEmpty(t, c.Why, "command %s says why", c.ID)
	}
	assert.Positive(t, rep.BudgetAllowed)
	assert.Positive(t, rep.MaxConcurrentDisruptions)
	assert.LessOrEqual(t, rep.MaxConcurrentDisruptions, rep.BudgetAllowed, "never more nodes disrupting than the budget allows")
	assert.Zero(t, rep.BudgetExceededSamples)
	assert.GreaterOrEqual(t, rep.ConsolidatedAfterSeconds, 0.0, "a drained node went")
	assert.GreaterOrEqual(t, rep.SettledAfterSeconds, 0.0, "consolidation settled")
	assert.Positive(t, rep.WakeInvocations, "the termination flow woke the disruption function")
	assert.Zero(t, rep.PodsLost)
	assert.Zero(t, rep.PodsUnbound)
	assert.Equal(t, rep.ScaledTo, rep.PodsRunning)
	assert.Zero(t, rep.LeakedInstances)
	assert.Empty(t, rep.Leaks)
	assert.Empty(t, rep.Errors)
	assert.Positive(t, rep.MirrorLagSeconds.N, "the disruption-state changes' mirror lag was measured")
	for target, met := range rep.TargetsMet {
		if target == mirrorLagTarget {
			continue // a timing: the report's, not the test's
		}
		assert.True(t, met, target)
	}
	if !rep.Worked() {
		dump(t, sb)
	}
}
