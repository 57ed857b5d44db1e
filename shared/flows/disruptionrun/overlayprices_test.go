package disruptionrun

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Nodes are judged at their pool's overlaid prices, as Karpenter prices candidates: a node launched
// before a Savings Plan overlay is compared with replacements at the same (overlay) prices, and one
// launched at an overlay's price goes back to the catalog's once the overlay is gone.
func TestOverlayPricingRepricesNodes(t *testing.T) {
	offer := func(price float64, overlaid bool) []scheduling.Offering {
		return []scheduling.Offering{{Zone: "us-east-1a", CapacityType: "on-demand", Price: price, Available: true, PriceOverlaid: overlaid}}
	}
	res := scheduling.Resources{CPU: 4000}
	overlaidPool := scheduling.NodePool{Name: "sp", InstanceTypes: []*scheduling.InstanceType{
		scheduling.NewInstanceType("m5.xlarge", nil, res, res, offer(0.1344, true))}}
	plainPool := scheduling.NodePool{Name: "plain", InstanceTypes: []*scheduling.InstanceType{
		scheduling.NewInstanceType("m5.xlarge", nil, res, res, offer(0.192, false))}}
	op := overlaidPrices(map[string]scheduling.NodePool{"sp": overlaidPool, "plain": plainPool})

	price, ok := op.of("sp", "m5.xlarge", "us-east-1a", "on-demand", false)
	assert.True(t, ok, "an overlay prices the pool now")
	assert.InDelta(t, 0.1344, price, 1e-9)

	_, ok = op.of("plain", "m5.xlarge", "us-east-1a", "on-demand", false)
	assert.False(t, ok, "no overlay either side: the recorded price stands")

	price, ok = op.of("plain", "m5.xlarge", "us-east-1a", "on-demand", true)
	assert.True(t, ok, "launched at an overlay's price that is gone")
	assert.InDelta(t, 0.192, price, 1e-9)

	_, ok = op.of("sp", "c5.xlarge", "us-east-1a", "on-demand", false)
	assert.False(t, ok, "an offering the catalog lacks keeps the recorded price")
	_, ok = op.of("gone", "m5.xlarge", "us-east-1a", "on-demand", true)
	assert.False(t, ok, "a pool that cannot launch keeps the recorded price")
}
