package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// tablePrices prices the offerings it lists.
type tablePrices map[string]float64

func (p tablePrices) Price(instanceType, zone, capacityType string) (float64, bool) {
	v, ok := p[instanceType+"/"+zone+"/"+capacityType]
	return v, ok
}

func TestOfferingsInUseArePricedOnceEach(t *testing.T) {
	claim := func(name string, l state.Lifecycle, it, zone, ct string) state.Claim {
		return state.Claim{Name: name, Lifecycle: l, InstanceType: it, Zone: zone, CapacityType: ct}
	}
	claims := []state.Claim{
		claim("a", state.Initialized, "m5.large", "us-east-1a", "spot"),
		claim("b", state.Initialized, "m5.large", "us-east-1a", "spot"),
		claim("c", state.Registered, "c5.xlarge", "us-east-1b", "on-demand"),
		claim("d", state.Pending, "", "", ""),
		claim("e", state.Draining, "r5.large", "us-east-1a", "on-demand"),
		claim("f", state.Initialized, "p5.48xlarge", "us-east-1a", "reserved"),
	}
	prices := tablePrices{"m5.large/us-east-1a/spot": 0.04, "c5.xlarge/us-east-1b/on-demand": 0.17, "r5.large/us-east-1a/on-demand": 0.126}
	assert.Equal(t, []OfferingPrice{
		{InstanceType: "c5.xlarge", CapacityType: "on-demand", Zone: "us-east-1b", Price: 0.17},
		{InstanceType: "m5.large", CapacityType: "spot", Zone: "us-east-1a", Price: 0.04},
	}, OfferingsInUse(claims, prices), "one series per offering in use; none for a launch not placed yet, a claim on its way out or an unpriced offering")
	assert.Empty(t, OfferingsInUse(nil, prices), "no Nodes, no series")
	assert.Nil(t, OfferingsInUse(claims, nil))
}
