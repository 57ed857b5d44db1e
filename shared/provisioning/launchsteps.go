package provisioning

import "github.com/nodewright/nodewright/shared/instance"

// launchStep is the overrides of one capacity type that a launch tries until they run out.
type launchStep struct {
	capacityType string
	overrides    []instance.Override
}

// launchSteps are the plan's capacity types in launch precedence: reserved (one step per reservation
// type, ODCRs before capacity blocks, since a fleet takes one), then spot, then on-demand.
func launchSteps(plan LaunchPlan) []launchStep {
	var steps []launchStep
	for _, rtype := range []string{instance.ReservationTypeDefault, instance.ReservationTypeCapacityBlock} {
		var overrides []instance.Override
		for _, o := range plan.Reserved {
			if o.ReservationType == rtype {
				overrides = append(overrides, o)
			}
		}
		if len(overrides) > 0 {
			steps = append(steps, launchStep{instance.CapacityTypeReserved, overrides})
		}
	}
	return append(steps, launchStep{instance.CapacityTypeSpot, plan.Spot}, launchStep{instance.CapacityTypeOnDemand, plan.OnDemand})
}
