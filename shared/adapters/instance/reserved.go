package instance

import (
	"fmt"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// A reserved launch is an on-demand fleet (a capacity-block fleet for capacity blocks) whose launch
// templates target one capacity reservation each: a fleet override cannot name a reservation, so the
// targeting lives in the launch template's CapacityReservationSpecification. One launch uses one
// reservation type, as EC2 fleets take one default target capacity type: an interruptible reservation
// is a type of its own (a reserved-capacity fleet whose options name interruptible-capacity-reservation).

// validateReserved checks that every override of a reserved launch names its reservation, all of one type.
func validateReserved(overrides []Override) error {
	rtype := overrides[0].ReservationType
	for _, o := range overrides {
		switch {
		case o.ReservationID == "":
			return &LaunchError{Kind: KindInvalidRequest, Code: "MissingParameter", Message: fmt.Sprintf("reserved override %s/%s names no capacity reservation", o.InstanceType, o.Zone)}
		case o.ReservationType != ReservationTypeDefault && o.ReservationType != ReservationTypeCapacityBlock:
			return &LaunchError{Kind: KindInvalidRequest, Code: "InvalidReservationType", Message: fmt.Sprintf("reservation %s has type %q, not default or capacity-block", o.ReservationID, o.ReservationType)}
		case o.ReservationType != rtype:
			return &LaunchError{Kind: KindInvalidRequest, Code: "MixedReservationTypes", Message: fmt.Sprintf("one launch mixes reservation types %q and %q", rtype, o.ReservationType)}
		case o.Interruptible && o.ReservationType == ReservationTypeCapacityBlock:
			return &LaunchError{Kind: KindInvalidRequest, Code: "InvalidReservationType", Message: fmt.Sprintf("reservation %s is a capacity block and interruptible; capacity blocks never are", o.ReservationID)}
		case o.Interruptible != overrides[0].Interruptible:
			return &LaunchError{Kind: KindInvalidRequest, Code: "MixedReservationTypes", Message: fmt.Sprintf("one launch mixes interruptible and non-interruptible reservations (%s and %s)", overrides[0].ReservationID, o.ReservationID)}
		}
	}
	return nil
}

// fleetCapacityType is the fleet's default target capacity type: a reserved launch is on-demand,
// capacity-block for capacity blocks, or reserved-capacity for an interruptible reservation (as Karpenter
// launches them).
func (req Request) fleetCapacityType() ec2types.DefaultTargetCapacityType {
	if req.CapacityType != CapacityTypeReserved {
		return ec2types.DefaultTargetCapacityType(req.CapacityType)
	}
	switch {
	case len(req.Overrides) > 0 && req.Overrides[0].ReservationType == ReservationTypeCapacityBlock:
		return ec2types.DefaultTargetCapacityTypeCapacityBlock
	case len(req.Overrides) > 0 && req.Overrides[0].Interruptible:
		return ec2types.DefaultTargetCapacityTypeReservedCapacity
	}
	return ec2types.DefaultTargetCapacityTypeOnDemand
}

// reserved marks an instance of a reserved launch as reserved, naming its reservation from EC2 or, when
// EC2 did not say, from the override of its type and zone; it is interruptible when EC2 or that
// override says so.
func (req Request) reserved(inst Instance) Instance {
	if req.CapacityType != CapacityTypeReserved || inst.ID == "" {
		return inst
	}
	inst.CapacityType = CapacityTypeReserved
	for _, o := range req.Overrides {
		if inst.CapacityReservationID == "" && o.InstanceType == inst.InstanceType && (inst.Zone == "" || o.Zone == inst.Zone) {
			inst.CapacityReservationID = o.ReservationID
		}
		if o.ReservationID != "" && o.ReservationID == inst.CapacityReservationID {
			inst.InterruptibleReservation = inst.InterruptibleReservation || o.Interruptible
			break
		}
	}
	return inst
}
