package scheduling

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
)

// Offering is one way to buy an instance type: a zone and capacity type at a price per hour.
type Offering struct {
	Zone string `json:"zone"`
	// ZoneID is the zone's id (topology.k8s.aws/zone-id, e.g. usw2-az1), "" when unknown (a catalog
	// file written without it): a zone-id requirement then does not rule the offering out.
	ZoneID       string  `json:"zoneID,omitempty"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
	Available    bool    `json:"available"`
	// ReservationID names the capacity reservation of a reserved offering.
	ReservationID string `json:"reservationID,omitempty"`
	// ReservationCapacity is how many more instances the capacity reservation of a reserved offering
	// takes (EC2's AvailableInstanceCount). 0 means the reservation is full, never "unknown": a reserved
	// offering is usable only while it names its reservation and this is at least 1, and Solve plans at
	// most this many new claims into the reservation. Spot and on-demand offerings leave it 0.
	ReservationCapacity int `json:"reservationCapacity,omitempty"`
	// PriceOverlaid says a NodeOverlay set Price (shared/core/nodeoverlay); a launch whose options carry such an
	// offering asks EC2 for the overlay's order (prioritized allocation) instead of its own lowest price.
	PriceOverlaid bool `json:"-"`
	// ReservationType is a reserved offering's reservation type, default or capacity-block ("" reads as
	// default); Interruptible says its reservation is an interruptible one, whose owner may reclaim the
	// capacity. They are the offering's capacity-reservation-type and -interruptible label values.
	ReservationType string `json:"reservationType,omitempty"`
	Interruptible   bool   `json:"interruptible,omitempty"`
}

// Reservation types (Offering.ReservationType).
const (
	ReservationTypeDefault       = "default"
	ReservationTypeCapacityBlock = "capacity-block"
)

// ReservationTypeLabel is the offering's capacity-reservation-type value: its reservation's type, default
// when unknown.
func (o *Offering) ReservationTypeLabel() string {
	return cmp.Or(o.ReservationType, ReservationTypeDefault)
}

// OfferingKey identifies an offering of an instance type; with a ReservationID, the offering of that one
// capacity reservation.
type OfferingKey struct {
	InstanceType  string
	Zone          string
	CapacityType  string
	ReservationID string
}

func (k OfferingKey) String() string {
	if k.ReservationID != "" {
		return fmt.Sprintf("%s/%s/%s/%s", k.InstanceType, k.Zone, k.CapacityType, k.ReservationID)
	}
	return fmt.Sprintf("%s/%s/%s", k.InstanceType, k.Zone, k.CapacityType)
}

// UnavailableOfferings holds offerings recently found to have no capacity (insufficient capacity errors);
// the solver treats them as unavailable whatever the catalog says.
type UnavailableOfferings map[OfferingKey]bool

// Has reports whether the offering is marked unavailable.
func (u UnavailableOfferings) Has(k OfferingKey) bool { return u[k] }

// Blocks reports whether offering o of instanceType is marked unavailable: its type × zone × capacity
// type, or, for a reserved offering, its reservation alone (a reservation whose owner reclaimed it).
func (u UnavailableOfferings) Blocks(instanceType string, o *Offering) bool {
	if len(u) == 0 {
		return false
	}
	k := OfferingKey{InstanceType: instanceType, Zone: o.Zone, CapacityType: o.CapacityType}
	if u[k] {
		return true
	}
	if o.ReservationID == "" {
		return false
	}
	k.ReservationID = o.ReservationID
	return u[k]
}

// capacityTypeRank orders capacity types by launch precedence: reserved, then spot, then on-demand.
func capacityTypeRank(ct string) int {
	switch ct {
	case CapacityTypeReserved:
		return 0
	case CapacityTypeSpot:
		return 1
	case CapacityTypeOnDemand:
		return 2
	}
	return 3
}

// CompareCapacityTypes orders capacity types by launch precedence (reserved < spot < on-demand).
func CompareCapacityTypes(a, b string) int {
	return cmp.Or(cmp.Compare(capacityTypeRank(a), capacityTypeRank(b)), cmp.Compare(a, b))
}

// offeringReqs are the requirements an offering is checked against, looked up once per instance type
// rather than once per offering.
type offeringReqs struct {
	zone, zoneID, capacityType                    *Requirement
	reservationID, reservationType, interruptible *Requirement
}

func offeringReqsOf(reqs Requirements) offeringReqs {
	return offeringReqs{zone: reqs[LabelZone], zoneID: reqs[LabelZoneID], capacityType: reqs[LabelCapacityType],
		reservationID: reqs[LabelCapacityReservationID], reservationType: reqs[LabelCapacityReservationType],
		interruptible: reqs[LabelCapacityReservationInterrupt]}
}

// compatibleOffering reports whether o can be used under reqs (zone, zone id, capacity type and
// reservation allowed) and is available; a reserved offering also needs a reservation with room
// (usableReservation).
func (it *InstanceType) compatibleOffering(o *Offering, reqs Requirements, unavailable UnavailableOfferings) bool {
	return it.offeringAllowed(o, offeringReqsOf(reqs), unavailable)
}

// offeringAllowed is compatibleOffering with the requirements looked up. An offering whose zone id is
// unknown is not ruled out by a zone-id requirement.
func (it *InstanceType) offeringAllowed(o *Offering, r offeringReqs, unavailable UnavailableOfferings) bool {
	if !o.Available || unavailable.Blocks(it.Name, o) {
		return false
	}
	if o.CapacityType == CapacityTypeReserved && !usableReservation(o) {
		return false
	}
	if r.zone != nil && !r.zone.Has(o.Zone) {
		return false
	}
	if r.zoneID != nil && o.ZoneID != "" && !r.zoneID.Has(o.ZoneID) {
		return false
	}
	if r.capacityType != nil && !r.capacityType.Has(o.CapacityType) {
		return false
	}
	return r.reservationAllows(o)
}

// reservationAllows reports whether the requirements allow the offering's reservation labels, as
// Karpenter's offerings carry them: a reserved offering has capacity-reservation-id, -type and
// -interruptible In [its values]; a spot or on-demand offering has all three DoesNotExist, so that a
// pod or NodePool requiring one (In, Exists) is never placed on it, while NotIn and DoesNotExist allow it.
func (r offeringReqs) reservationAllows(o *Offering) bool {
	if o.ReservationID == "" {
		return absenceAllowed(r.reservationID) && absenceAllowed(r.reservationType) && absenceAllowed(r.interruptible)
	}
	return (r.reservationID == nil || r.reservationID.Has(o.ReservationID)) &&
		(r.reservationType == nil || r.reservationType.Has(o.ReservationTypeLabel())) &&
		(r.interruptible == nil || r.interruptible.Has(strconv.FormatBool(o.Interruptible)))
}

// absenceAllowed reports whether a requirement, if any, lets its label be absent.
func absenceAllowed(r *Requirement) bool { return r == nil || allowsAbsence(r) }

// ReservationLabelsAllow reports whether reqs allow the offering's capacity-reservation-id, -type and
// -interruptible labels (see offeringReqs.reservationAllows).
func ReservationLabelsAllow(o *Offering, reqs Requirements) bool {
	return offeringReqsOf(reqs).reservationAllows(o)
}

// usableReservation reports whether a reserved offering names its reservation and has room for one more
// instance; a launch cannot target a reservation without an id.
func usableReservation(o *Offering) bool {
	return o.ReservationID != "" && o.ReservationCapacity > 0
}

// CheapestOffering returns the cheapest available offering compatible with reqs, ties broken by capacity
// type precedence then zone; ok is false when there is none.
func (it *InstanceType) CheapestOffering(reqs Requirements, unavailable UnavailableOfferings) (Offering, bool) {
	best, found := Offering{}, false
	r := offeringReqsOf(reqs)
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if !it.offeringAllowed(o, r, unavailable) {
			continue
		}
		if !found || o.Price < best.Price || (o.Price == best.Price && cmp.Or(CompareCapacityTypes(o.CapacityType, best.CapacityType), cmp.Compare(o.Zone, best.Zone)) < 0) {
			best, found = *o, true
		}
	}
	return best, found
}

// LaunchOffering returns the offering a launch would use: the most preferred capacity type among the
// compatible available offerings (reserved, then spot, then on-demand), and within it the cheapest.
func (it *InstanceType) LaunchOffering(reqs Requirements, unavailable UnavailableOfferings) (Offering, bool) {
	best, found := Offering{}, false
	r := offeringReqsOf(reqs)
	for i := range it.Offerings {
		o := &it.Offerings[i]
		if !it.offeringAllowed(o, r, unavailable) {
			continue
		}
		if !found {
			best, found = *o, true
			continue
		}
		c := CompareCapacityTypes(o.CapacityType, best.CapacityType)
		if c < 0 || (c == 0 && (o.Price < best.Price || (o.Price == best.Price && o.Zone < best.Zone))) {
			best = *o
		}
	}
	return best, found
}

// cheapestPrice returns the price of the cheapest compatible available offering, or +Inf.
func (it *InstanceType) cheapestPrice(reqs Requirements, unavailable UnavailableOfferings) float64 {
	if o, ok := it.CheapestOffering(reqs, unavailable); ok {
		return o.Price
	}
	return math.Inf(1)
}

// OfferingPrices indexes the price of every offering of types by instance type, zone and capacity
// type; where an instance type lists one twice, an available offering's price wins over an
// unavailable one's. plan --disrupt prices existing nodes with it (and the Karpenter comparison
// prices both sides' nodes with it).
func OfferingPrices(types []*InstanceType) map[OfferingKey]float64 {
	out := map[OfferingKey]float64{}
	for _, it := range types {
		for _, o := range it.Offerings {
			k := OfferingKey{InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType}
			if _, seen := out[k]; !seen || o.Available {
				out[k] = o.Price
			}
		}
	}
	return out
}
