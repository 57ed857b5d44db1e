package provisioning

import (
	"github.com/nodewright/nodewright/shared/core/apis"
)

// Reservations are the capacity reservations this run's EC2NodeClass resolutions found usable (active,
// or a capacity block expiring), by id, across every class that resolved: what the disruption run judges
// the end of blocks and reservations from without another call to EC2. A reservation no class selects
// now is not here, whatever its state.
func (l *Launches) Reservations() map[string]apis.CapacityReservationStatus {
	out := map[string]apis.CapacityReservationStatus{}
	for _, rc := range l.classes {
		for _, cr := range rc.resolved.CapacityReservations {
			out[cr.ID] = cr.CapacityReservationStatus
		}
	}
	return out
}

// OnDemandPrice is the hourly on-demand price of instanceType as this run prices launches; false when it
// is not priced.
func (l *Launches) OnDemandPrice(instanceType string) (float64, bool) {
	if l.p == nil || l.p.deps.Prices == nil {
		return 0, false
	}
	return l.p.deps.Prices.OnDemand(instanceType)
}
