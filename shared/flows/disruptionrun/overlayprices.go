package disruptionrun

import (
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// overlayPricing re-prices nodes when NodeOverlays are in play, as Karpenter prices a consolidation
// candidate from its NodePool's instance types with the overlays applied rather than at its launch price.
type overlayPricing struct {
	pools map[string]scheduling.NodePool
	// overlaid says, per pool, whether an overlay priced one of its offerings (computed on first use).
	overlaid map[string]bool
	// prices index each pool's offering prices, built on first use: at most once per pool and run
	// (types × offerings).
	prices map[string]map[scheduling.OfferingKey]float64
}

func overlaidPrices(pools map[string]scheduling.NodePool) *overlayPricing {
	return &overlayPricing{pools: pools, overlaid: map[string]bool{}, prices: map[string]map[scheduling.OfferingKey]float64{}}
}

// of is the price to judge a node of pool at, and whether it replaces the claim's recorded price: the
// offering's current price when an overlay prices the pool now, or when the claim was launched at an
// overlay's price (launchedOverlaid: an overlay removed or changed since re-prices it). Without overlays
// either side, or when the catalog lacks the offering, the recorded price stands.
func (op *overlayPricing) of(pool, instanceType, zone, capacityType string, launchedOverlaid bool) (float64, bool) {
	p, ok := op.pools[pool]
	if !ok {
		return 0, false
	}
	overlaid, seen := op.overlaid[pool]
	if !seen {
		overlaid = anyPriceOverlaid(p.InstanceTypes)
		op.overlaid[pool] = overlaid
	}
	if !overlaid && !launchedOverlaid {
		return 0, false
	}
	prices, built := op.prices[pool]
	if !built {
		prices = scheduling.OfferingPrices(p.InstanceTypes)
		op.prices[pool] = prices
	}
	price, found := prices[scheduling.OfferingKey{InstanceType: instanceType, Zone: zone, CapacityType: capacityType}]
	return price, found
}

func anyPriceOverlaid(types []*scheduling.InstanceType) bool {
	for _, it := range types {
		if it.PriceOverlaid() {
			return true
		}
	}
	return false
}
