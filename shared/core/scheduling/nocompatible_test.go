package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// A NodePool whose requirements leave no instance type is named in the plan, for Karpenter's
// NoCompatibleInstanceTypes Event; a pool that has types is not, whether or not pods went to it.
func TestPlanNamesNodePoolsWithoutCompatibleInstanceTypes(t *testing.T) {
	pools := []scheduling.NodePool{
		NodePool("arm", Requirement(scheduling.LabelArch, scheduling.OpIn, "s390x")),
		NodePool("default"),
		NodePool("unused", Requirement(scheduling.LabelArch, scheduling.OpIn, "amd64")),
	}
	plan, err := scheduling.Solve(scheduling.Input{Pods: Pods(2, PodOptions{Name: "p", Owner: "p", CPU: "100m", Memory: "128Mi"}),
		NodePools: pools, InstanceTypes: SmallCatalog()})
	require.NoError(t, err)
	require.NotEmpty(t, plan.NewClaims)
	assert.Equal(t, []string{"arm"}, plan.NoCompatibleInstanceTypes)

	plan, err = scheduling.Solve(scheduling.Input{Pods: Pods(1, PodOptions{Name: "p", Owner: "p", CPU: "100m"}),
		NodePools: pools[1:], InstanceTypes: SmallCatalog()})
	require.NoError(t, err)
	assert.Empty(t, plan.NoCompatibleInstanceTypes)
}
