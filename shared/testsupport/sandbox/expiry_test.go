package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Nodes of a NodePool with expireAfter 2m are removed when they expire, whatever the budget, with
// replacement capacity launched and initialized before they drain; no pod lost, nothing leaked.
func TestExpiryRemovesEveryOriginalNodeAfterReplacingIt(t *testing.T) {
	sb := start(t)
	rep, err := sb.Expiry(context.Background(), ExpiryOptions{ScaleUpOptions: ScaleUpOptions{Replicas: 10, Timeout: 2 * time.Minute}, Timeout: 5 * time.Minute})
	require.NoError(t, err)
	t.Logf("report: %+v", rep)
	assert.GreaterOrEqual(t, rep.NodesBefore, 2, "the scale-up built several nodes")
	assert.Equal(t, rep.NodesBefore, rep.ExpiredNodes, "every original node expired and went")
	assert.True(t, rep.ReplacementLaunchedBeforeDrain, "replacements up before the drains: %v", rep.ReplacementOrder)
	assert.Empty(t, rep.ExpiredWithoutReplacement)
	assert.Zero(t, rep.PodsLost)
	assert.Zero(t, rep.LeakedInstances)
	assert.Empty(t, rep.Errors)
	for target, met := range rep.TargetsMet {
		assert.True(t, met, target)
	}
	if !rep.Worked() {
		dump(t, sb)
	}
}
