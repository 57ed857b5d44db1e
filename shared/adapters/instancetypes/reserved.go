package instancetypes

import "github.com/nodewright/nodewright/shared/core/scheduling"

// Reservation is a capacity reservation a node class may launch into, as offerings need it.
type Reservation struct {
	ID, InstanceType, Zone string
	// Type is default or capacity-block ("" reads as default); Interruptible marks an interruptible
	// reservation, whose owner may reclaim its capacity.
	Type          string
	Interruptible bool
	// Available is how many more instances the reservation takes.
	Available int32
}

// ReservedPriceDivisor divides the on-demand price of a type to price its reserved offerings: the capacity
// is already paid for, so a reserved offering is always the cheapest, as in Karpenter.
const ReservedPriceDivisor = 10_000_000

// ReservedOffering is the offering of one reservation: capacity type reserved in its zone, priced at a tiny
// fraction of the on-demand price, available while the reservation has room, with that room as its
// ReservationCapacity so that a solve plans no more instances into it than it takes.
func ReservedOffering(r Reservation, prices Prices) scheduling.Offering {
	price, _ := prices.OnDemand(r.InstanceType) // an unpriced type still gets a (zero) price: it is paid for
	return scheduling.Offering{Zone: r.Zone, CapacityType: scheduling.CapacityTypeReserved, Price: price / ReservedPriceDivisor,
		Available: r.Available > 0, ReservationID: r.ID, ReservationCapacity: int(max(r.Available, 0)),
		ReservationType: r.Type, Interruptible: r.Interruptible}
}

// reservedOfferings are the reserved offerings of instanceType, in the reservations' order.
func reservedOfferings(instanceType string, reservations []Reservation, prices Prices) []scheduling.Offering {
	var out []scheduling.Offering
	for _, r := range reservations {
		if r.InstanceType == instanceType {
			out = append(out, ReservedOffering(r, prices))
		}
	}
	return out
}
