package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// A claim whose instance-type options include a type a NodeOverlay priced, or gave capacity, says so
// (karpenter.sh/price-overlay-applied, karpenter.sh/capacity-overlay-applied on its Node).
func TestClaimPlansSayWhetherAnOverlayApplied(t *testing.T) {
	pods := []*corev1.Pod{Pod(PodOptions{Name: "p", CPU: "1"})}
	solve := func(types []*scheduling.InstanceType) scheduling.ClaimPlan {
		t.Helper()
		plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: types})
		require.NoError(t, err)
		require.Len(t, plan.NewClaims, 1)
		return plan.NewClaims[0]
	}
	cp := solve(SmallCatalog())
	assert.False(t, cp.PriceOverlayApplied)
	assert.False(t, cp.CapacityOverlayApplied)

	priced := SmallCatalog()
	for _, it := range priced {
		c := *it
		c.Offerings = append([]scheduling.Offering(nil), it.Offerings...)
		c.Offerings[0].PriceOverlaid = true
		*it = c
	}
	cp = solve(priced)
	assert.True(t, cp.PriceOverlayApplied)
	assert.False(t, cp.CapacityOverlayApplied)

	withCapacity := SmallCatalog()
	for _, it := range withCapacity {
		it.CapacityOverlaid = true
	}
	cp = solve(withCapacity)
	assert.False(t, cp.PriceOverlayApplied)
	assert.True(t, cp.CapacityOverlayApplied)
}
