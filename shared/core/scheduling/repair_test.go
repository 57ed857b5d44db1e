package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestRepairSpread: zone b cannot launch anything (its NodePool has no CPU left), so of six pods spread
// with maxSkew 1 only one may go to zone a; the packer's balanced quota first gives zone a three, and
// the repair takes two back.
func TestRepairSpread(t *testing.T) {
	plan, err := scheduling.Solve(scheduling.Input{
		Pods: webPods(6, PodOptions{Spread: spread(scheduling.LabelZone, 1, "web")}),
		NodePools: pools(
			NodePool("zone-a", Requirement(scheduling.LabelZone, scheduling.OpIn, "us-west-2a")),
			NodePool("zone-b", Requirement(scheduling.LabelZone, scheduling.OpIn, "us-west-2b"), Limits("cpu", "0")),
		),
		InstanceTypes: SmallCatalog(),
	})
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 1)
	assert.Equal(t, "us-west-2a", plan.NewClaims[0].Zone)
	assert.Len(t, plan.NewClaims[0].Pods, 1)
	assert.Len(t, plan.Unschedulable, 5)
	topology := 0
	for _, f := range plan.Unschedulable {
		if f.Rejections[0].Constraint == scheduling.ConstraintTopology {
			topology++
		}
	}
	assert.Positive(t, topology, "repaired pods say why")
}
