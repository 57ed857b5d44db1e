package provisioning

import "github.com/nodewright/nodewright/shared/adapters/instance"

// launchStep is the overrides of one capacity type that a launch tries until they run out.
type launchStep struct {
	capacityType string
	overrides    []instance.Override
}

// launchSteps are the plan's capacity types in launch precedence: reserved (one step per reservation
// type, since a fleet takes one: ODCRs, then capacity blocks, then interruptible ODCRs, Karpenter's order
// among reservation types), then spot, then on-demand.
func launchSteps(plan LaunchPlan) []launchStep {
	var steps []launchStep
	kinds := []struct {
		rtype         string
		interruptible bool
	}{{instance.ReservationTypeDefault, false}, {instance.ReservationTypeCapacityBlock, false}, {instance.ReservationTypeDefault, true}}
	for _, k := range kinds {
		var overrides []instance.Override
		for _, o := range plan.Reserved {
			if o.ReservationType == k.rtype && o.Interruptible == k.interruptible {
				overrides = append(overrides, o)
			}
		}
		if len(overrides) > 0 {
			steps = append(steps, launchStep{instance.CapacityTypeReserved, overrides})
		}
	}
	return append(steps, launchStep{instance.CapacityTypeSpot, plan.Spot}, launchStep{instance.CapacityTypeOnDemand, plan.OnDemand})
}
