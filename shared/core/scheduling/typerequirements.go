package scheduling

// instanceDescribingKeys are the AWS labels that describe an instance type's hardware. A type without
// one (no GPU, no local NVMe, no known CPU manufacturer...) requires the key to be absent, as
// Karpenter's instance types do, so that a NodePool or pod requiring it (instance-local-nvme Exists,
// instance-gpu-count Gte 1, instance-gpu-name In [t4]) rules the type out instead of ignoring a key
// only one side defines (Requirements.Intersects).
var instanceDescribingKeys = []string{
	LabelInstanceCategory, LabelInstanceFamily, LabelInstanceGeneration, LabelInstanceSize,
	LabelInstanceCPUManufacturer, LabelInstanceCPUSustainedClock,
	LabelInstanceEBSBandwidth, LabelInstanceNetworkBandwidth, LabelInstanceLocalNVMe,
	LabelInstanceGPUName, LabelInstanceGPUManufacturer, LabelInstanceGPUCount, LabelInstanceGPUMemory,
	LabelInstanceAcceleratorName, LabelInstanceAcceleratorMaker, LabelInstanceAcceleratorCount,
}

// reservationKeys are absent on a type with no reserved offering. A type with one leaves them to its
// offerings (compatibleOffering): its spot and on-demand offerings carry no reservation, and a claim
// falling back from a used-up reservation requires capacity-reservation-id NotIn [it], which a type
// requirement In [its ids] would refuse.
var reservationKeys = []string{LabelCapacityReservationID, LabelCapacityReservationType, LabelCapacityReservationInterrupt}

// absent holds one shared DoesNotExist requirement per key; requirements are never modified once
// built, so every instance type can point at the same one and building a catalog allocates none.
var absent = func() map[string]*Requirement {
	out := map[string]*Requirement{LabelWindowsBuild: {Key: LabelWindowsBuild}}
	for _, k := range append(append([]string(nil), instanceDescribingKeys...), reservationKeys...) {
		out[k] = &Requirement{Key: k}
	}
	return out
}()

// notFlex is the shared instance-capability-flex In [false] of every type that is not a flex type.
var notFlex = &Requirement{Key: LabelInstanceCapabilityFlex, values: []string{"false"}}

// addAbsentKeys completes the requirements of an instance type built from labels: DoesNotExist for
// each instance-describing key the labels lack, instance-capability-flex "false" unless labelled, the
// Windows build absent on a type that is not Windows, the reservation keys absent when no offering is
// reserved, and zone-id In the offerings' zone ids when every offering knows its zone's id (a catalog
// file written before zone ids has none: zone-id then stays unconstrained, as before).
func addAbsentKeys(reqs Requirements, labels map[string]string, offerings []Offering) {
	for _, k := range instanceDescribingKeys {
		if !reqs.Has(k) {
			reqs[k] = absent[k]
		}
	}
	if !reqs.Has(LabelInstanceCapabilityFlex) {
		reqs[LabelInstanceCapabilityFlex] = notFlex
	}
	if !reqs.Has(LabelWindowsBuild) && labels[LabelOS] != "windows" {
		reqs[LabelWindowsBuild] = absent[LabelWindowsBuild]
	}
	reserved, idsKnown := false, len(offerings) > 0
	for _, o := range offerings {
		reserved = reserved || o.CapacityType == CapacityTypeReserved
		idsKnown = idsKnown && o.ZoneID != ""
	}
	if !reserved {
		for _, k := range reservationKeys {
			if !reqs.Has(k) {
				reqs[k] = absent[k]
			}
		}
	}
	if idsKnown {
		ids := make([]string, len(offerings))
		for i, o := range offerings {
			ids[i] = o.ZoneID
		}
		reqs.Add(&Requirement{Key: LabelZoneID, values: sortedUnique(ids)})
	}
}
