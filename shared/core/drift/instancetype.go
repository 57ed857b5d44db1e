package drift

import "time"

// InstanceTypeCheckAge is how old a claim must be before InstanceTypeNotFound is judged, as in Karpenter:
// what a NodePool offers is the cloud's answer rather than the user's edit, so a young node is not rolled
// for a catalog that may only be settling.
const InstanceTypeCheckAge = time.Hour

// Labels the offering check reads.
const (
	labelZone         = "topology.kubernetes.io/zone"
	labelCapacityType = "karpenter.sh/capacity-type"
)

// Capacity types with a rule of their own.
const (
	capacityTypeReserved = "reserved"
	capacityTypeOnDemand = "on-demand"
)

// instanceType: once the claim is older than InstanceTypeCheckAge at now, its instance type must still be
// offered to its NodePool, with an offering in the node's zone and of its capacity type. A reserved node
// also accepts an on-demand offering (its reservation may have ended, leaving it on-demand; whether the
// reservation is still selected is CapacityReservationDrift's question). A label the node lacks does not
// narrow the offerings. Whether the type still meets the NodePool's requirements is RequirementsDrifted's.
func (d *detection) instanceType(c Claim, p NodePool, now time.Time) {
	name := c.Labels[labelInstanceType]
	switch {
	case c.CreatedAt.IsZero() || !recordsInstanceLabels(c.Labels):
		d.unknown = append(d.unknown, InstanceTypeNotFound)
		return
	case now.Sub(c.CreatedAt) <= InstanceTypeCheckAge:
		return
	case p.InstanceTypes == nil:
		d.undecided[InstanceTypeNotFound] = "the instance types the NodePool offers are not known"
		return
	}
	offerings, ok := p.InstanceTypes(name)
	if !ok {
		d.drift(InstanceTypeNotFound, "instanceType", name)
		return
	}
	zone, hasZone := c.Labels[labelZone]
	ct, hasCT := c.Labels[labelCapacityType]
	for _, o := range offerings {
		if (!hasZone || o.Zone == zone) && (!hasCT || acceptsCapacityType(ct, o.CapacityType)) {
			return
		}
	}
	d.drift(InstanceTypeNotFound, "instanceType", name, "zone", orNone(zone), "capacityType", orNone(ct))
}

// acceptsCapacityType reports whether a node bought as node may run on an offering bought as offered.
func acceptsCapacityType(node, offered string) bool {
	return node == offered || (node == capacityTypeReserved && offered == capacityTypeOnDemand)
}
