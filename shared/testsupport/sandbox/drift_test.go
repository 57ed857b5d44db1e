package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A NodePool template change and a newer AMI, in one step, drift every original node; the disruption
// function replaces them all within the Drifted budget, with no pod lost and nothing leaked, and the
// new nodes do not drift.
func TestDriftReplacesEveryOriginalNodeWithinTheBudget(t *testing.T) {
	sb := start(t)
	rep, err := sb.Drift(context.Background(), DriftOptions{ScaleUpOptions: ScaleUpOptions{Replicas: 10, Timeout: 2 * time.Minute}, Timeout: 5 * time.Minute})
	require.NoError(t, err)
	t.Logf("report: %+v", rep)
	assert.GreaterOrEqual(t, rep.NodesBefore, 2, "the scale-up built several nodes")
	assert.Equal(t, rep.NodesBefore, rep.DriftedNodes, "every original node drifted")
	assert.Equal(t, rep.NodesBefore, rep.ReplacedNodes, "every original node replaced")
	assert.NotEqual(t, rep.OldImageID, rep.NewImageID)
	assert.Empty(t, rep.NewNodesDrifted, "new nodes carry the new template and AMI")
	assert.Positive(t, rep.BudgetAllowed)
	assert.LessOrEqual(t, rep.MaxConcurrentDisruptions, rep.BudgetAllowed)
	assert.Zero(t, rep.PodsLost)
	assert.Zero(t, rep.LeakedInstances)
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
