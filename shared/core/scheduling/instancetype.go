package scheduling

import (
	"cmp"
	"slices"
)

// MaxInstanceTypeOptions is how many instance types, cheapest first, a claim hands to a launch (the AWS
// provider's CreateFleet override limit).
const MaxInstanceTypeOptions = 60

// InstanceType is one launchable machine shape as the scheduler sees it.
type InstanceType struct {
	Name string
	// Requirements are the labels a node of this type carries, as requirements: instance-type, arch,
	// os, region when known, the AWS instance labels, and zone, zone-id (when known) and capacity-type
	// In the values of its offerings. The instance-describing labels a type lacks are required absent
	// (DoesNotExist; see addAbsentKeys), so a requirement on them rules the type out.
	Requirements Requirements
	// Capacity is what the machine has; Allocatable is what pods can request (capacity minus kube and
	// system reservations and eviction thresholds).
	Capacity    Resources
	Allocatable Resources
	Offerings   []Offering
	// CapacityOverlaid says a NodeOverlay set extended resources of Capacity and Allocatable
	// (shared/core/nodeoverlay).
	CapacityOverlaid bool
}

// PriceOverlaid reports whether a NodeOverlay set the price of one of the type's offerings.
func (it *InstanceType) PriceOverlaid() bool {
	for i := range it.Offerings {
		if it.Offerings[i].PriceOverlaid {
			return true
		}
	}
	return false
}

// NewInstanceType builds an instance type from its labels, capacity, allocatable and offerings, adding
// the instance-type label, zone, zone-id and capacity-type requirements derived from the offerings, and
// DoesNotExist for the AWS instance labels it lacks (addAbsentKeys).
func NewInstanceType(name string, labels map[string]string, capacity, allocatable Resources, offerings []Offering) *InstanceType {
	reqs := RequirementsFromLabels(labels)
	reqs.Add(&Requirement{Key: LabelInstanceType, values: []string{name}})
	var zones, cts []string
	for _, o := range offerings {
		zones = append(zones, o.Zone)
		cts = append(cts, o.CapacityType)
	}
	reqs.Add(&Requirement{Key: LabelZone, values: sortedUnique(zones)}, &Requirement{Key: LabelCapacityType, values: sortedUnique(cts)})
	addAbsentKeys(reqs, labels, offerings)
	return &InstanceType{Name: name, Requirements: reqs, Capacity: capacity, Allocatable: allocatable, Offerings: slices.Clone(offerings)}
}

// HasAvailableOffering reports whether some offering compatible with reqs is available.
func (it *InstanceType) HasAvailableOffering(reqs Requirements, unavailable UnavailableOfferings) bool {
	r := offeringReqsOf(reqs)
	for i := range it.Offerings {
		if it.offeringAllowed(&it.Offerings[i], r, unavailable) {
			return true
		}
	}
	return false
}

// OrderByPrice sorts instance types by the price of their cheapest available offering compatible with
// reqs, then by name, so the order is deterministic. Types without such an offering go last.
func OrderByPrice(types []*InstanceType, reqs Requirements, unavailable UnavailableOfferings) {
	prices := make(map[*InstanceType]float64, len(types))
	for _, it := range types {
		prices[it] = it.cheapestPrice(reqs, unavailable)
	}
	slices.SortStableFunc(types, func(a, b *InstanceType) int {
		return cmp.Or(cmp.Compare(prices[a], prices[b]), cmp.Compare(a.Name, b.Name))
	})
}
