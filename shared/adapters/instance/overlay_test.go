package instance

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// overridePriorities lists each override's instance type and priority (nil when unset), in request order.
func overridePriorities(t *testing.T, req Request) (types []string, priorities []*float64) {
	t.Helper()
	for name, in := range fleetInputs(t, req) {
		var ts []string
		var ps []*float64
		for _, c := range in.LaunchTemplateConfigs {
			for _, o := range c.Overrides {
				ts = append(ts, string(o.InstanceType))
				ps = append(ps, o.Priority)
			}
		}
		if types != nil {
			assert.Equal(t, types, ts, "%s: same overrides as the single launch", name)
		}
		types, priorities = ts, ps
	}
	return types, priorities
}

// A claim a NodeOverlay priced launches as Karpenter's provider launches it: each override's Priority is
// its (overlay) price and the fleet follows that order — spot capacity-optimized-prioritized, on-demand
// prioritized — instead of EC2's own lowest price.
func TestPriceOverlayLaunchesPrioritizedByOverlayPrice(t *testing.T) {
	req := request()
	req.PriceOverlay = true
	for name, in := range fleetInputs(t, req) {
		require.NotNil(t, in.SpotOptions, name)
		assert.Equal(t, ec2types.SpotAllocationStrategyCapacityOptimizedPrioritized, in.SpotOptions.AllocationStrategy, name)
		assert.Nil(t, in.OnDemandOptions, name)
	}
	types, priorities := overridePriorities(t, req)
	require.Len(t, priorities, 3)
	got := map[string]float64{}
	for i, ty := range types {
		require.NotNil(t, priorities[i], ty)
		got[ty] = aws.ToFloat64(priorities[i])
	}
	assert.Equal(t, map[string]float64{"c5.large": 0.03, "m6i.large": 0.04, "m5.large": 0.05}, got)

	req.CapacityType = CapacityTypeOnDemand
	for name, in := range fleetInputs(t, req) {
		require.NotNil(t, in.OnDemandOptions, name)
		assert.Equal(t, ec2types.FleetOnDemandAllocationStrategyPrioritized, in.OnDemandOptions.AllocationStrategy, name)
		assert.Nil(t, in.SpotOptions, name)
	}
}

// Without an overlay the fleet keeps EC2's own choice and the overrides carry no priority.
func TestNoPriceOverlayKeepsLowestPriceWithoutPriorities(t *testing.T) {
	req := request()
	for name, in := range fleetInputs(t, req) {
		assert.Equal(t, ec2types.SpotAllocationStrategyPriceCapacityOptimized, in.SpotOptions.AllocationStrategy, name)
	}
	_, priorities := overridePriorities(t, req)
	for _, p := range priorities {
		assert.Nil(t, p)
	}
	req.CapacityType = CapacityTypeOnDemand
	for name, in := range fleetInputs(t, req) {
		assert.Equal(t, ec2types.FleetOnDemandAllocationStrategyLowestPrice, in.OnDemandOptions.AllocationStrategy, name)
	}
}

// Over the wire (moto): a launch a NodeOverlay priced goes through with priorities and the prioritized
// strategies, spot and on-demand, and takes the override cheapest at the overlay's prices first.
func TestLaunchWithPriceOverlayOverTheWire(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	l := New(n.client, "demo")
	for _, ct := range []string{CapacityTypeSpot, CapacityTypeOnDemand} {
		req := n.request("default-overlay-" + ct)
		req.CapacityType, req.PriceOverlay = ct, true
		// The overlay made m5.large the cheaper one.
		req.Overrides[0].Price, req.Overrides[1].Price = 0.02, 0.03
		inst, err := l.Launch(ctx, req)
		require.NoError(t, err, ct)
		assert.Equal(t, "m5.large", inst.InstanceType, ct)
		assert.Equal(t, "us-east-1b", inst.Zone, ct)
	}
}
