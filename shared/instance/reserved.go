package instance

import (
	"fmt"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// A reserved launch is an on-demand fleet (a capacity-block fleet for capacity blocks) whose launch
// templates target one capacity reservation each: a fleet override cannot name a reservation, so the
// targeting lives in the launch template's CapacityReservationSpecification. One launch uses one
// reservation type, as EC2 fleets take one default target capacity type.

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
		}
	}
	return nil
}

// fleetCapacityType is the fleet's default target capacity type: a reserved launch is on-demand, or
// capacity-block for capacity blocks.
func (req Request) fleetCapacityType() ec2types.DefaultTargetCapacityType {
	if req.CapacityType != CapacityTypeReserved {
		return ec2types.DefaultTargetCapacityType(req.CapacityType)
	}
	if len(req.Overrides) > 0 && req.Overrides[0].ReservationType == ReservationTypeCapacityBlock {
		return ec2types.DefaultTargetCapacityTypeCapacityBlock
	}
	return ec2types.DefaultTargetCapacityTypeOnDemand
}

// reserved marks an instance of a reserved launch as reserved, naming its reservation from EC2 or, when
// EC2 did not say, from the override of its type and zone.
func (req Request) reserved(inst Instance) Instance {
	if req.CapacityType != CapacityTypeReserved || inst.ID == "" {
		return inst
	}
	inst.CapacityType = CapacityTypeReserved
	if inst.CapacityReservationID == "" {
		for _, o := range req.Overrides {
			if o.InstanceType == inst.InstanceType && (inst.Zone == "" || o.Zone == inst.Zone) {
				inst.CapacityReservationID = o.ReservationID
				break
			}
		}
	}
	return inst
}
