package lifecycle

import (
	"sort"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// OfferingPrice is the hourly price estimate of one offering (instance type, capacity type, zone).
type OfferingPrice struct {
	InstanceType, CapacityType, Zone string
	Price                            float64
}

// OfferingsInUse prices the distinct offerings the in-service claims run on, as Karpenter's
// cloudprovider_instance_type_offering_price_estimate does for every offering of the region. Every
// offering would be thousands of series (types × zones × capacity types) for CloudWatch to bill each
// month; the offerings in use are at most one per Node and in practice a handful, and none when no Node
// runs. A claim still launching has no offering yet; one whose offering has no price (a reservation,
// an isolated region without the type in its table) is left out. The claims are the sweep's, read anyway.
func OfferingsInUse(claims []state.Claim, prices Prices) []OfferingPrice {
	if prices == nil {
		return nil
	}
	seen := map[OfferingPrice]bool{}
	var out []OfferingPrice
	for _, c := range claims {
		if !c.Lifecycle.InService() || c.InstanceType == "" || c.Zone == "" || c.CapacityType == "" {
			continue
		}
		key := OfferingPrice{InstanceType: c.InstanceType, CapacityType: c.CapacityType, Zone: c.Zone}
		if seen[key] {
			continue
		}
		seen[key] = true
		price, ok := prices.Price(c.InstanceType, c.Zone, c.CapacityType)
		if !ok {
			continue
		}
		key.Price = price
		out = append(out, key)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.InstanceType != b.InstanceType {
			return a.InstanceType < b.InstanceType
		}
		if a.CapacityType != b.CapacityType {
			return a.CapacityType < b.CapacityType
		}
		return a.Zone < b.Zone
	})
	return out
}
