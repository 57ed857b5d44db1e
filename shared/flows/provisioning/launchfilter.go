package provisioning

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Names of the filters the launch applies, Karpenter's (aws/karpenter-provider-aws,
// pkg/providers/instance/filter), as the launch decision records them.
const (
	filterExoticInstance = "exotic-instance-filter"
	filterSpotOffering   = "spot-offering-filter"
)

// exoticResources are the device resources that make an instance type exotic: GPUs, Neuron devices and
// cores, Gaudi accelerators.
var exoticResources = []string{scheduling.ResourceNeuron, scheduling.ResourceNeuronCore, scheduling.ResourceAMDGPU,
	scheduling.ResourceNVIDIAGPU, scheduling.ResourceHabanaGaudi}

// isExotic reports whether an instance type is one a launch takes only when nothing else is left: a
// bare-metal size, or a type with GPUs or accelerators.
func isExotic(it *scheduling.InstanceType) bool {
	size := ""
	if r := it.Requirements.Get(scheduling.LabelInstanceSize); r != nil && len(r.Values()) == 1 {
		size = r.Values()[0]
	} else if _, s, ok := strings.Cut(it.Name, "."); ok {
		size = s
	}
	if strings.Contains(size, "metal") {
		return true
	}
	return slices.ContainsFunc(exoticResources, func(name string) bool { return it.Capacity.Extended[name] > 0 })
}

// filterOfferings applies, in Karpenter's order, the last two filters its launch runs on the instance
// types it sends to CreateFleet, after the solve picked them and the compatible, available offerings are
// known (offers):
//
//  1. exotic instance types (see isExotic) are left out when any other type is left, so a GPU, Neuron or
//     metal instance is launched only for pods that need one or when nothing else can be;
//  2. when both spot and on-demand are allowed and offered, a spot offering dearer than the cheapest
//     on-demand offering is left out.
//
// Neither applies to a claim whose requirements carry minValues (as in Karpenter): leaving types out
// could break them. The launch tries reserved offerings first, on their own fleet call, and then spot and
// on-demand (see launchSteps), so the exotic filter judges the reserved offerings among themselves and
// the spot and on-demand ones together, as Karpenter's does for the capacity type it launches. It never
// empties a step: with only exotic types, they stay. filtered says, per filter that left something out,
// what it left out.
func filterOfferings(offers []launchOffering, types map[string]*scheduling.InstanceType, reqs scheduling.Requirements) ([]launchOffering, []string) {
	if hasMinValues(reqs) {
		return offers, nil
	}
	var filtered []string
	reserved := func(o launchOffering) bool { return o.capacityType == instance.CapacityTypeReserved }
	var dropped []string
	offers, dropped = withoutExotic(offers, types, reserved)
	offers, more := withoutExotic(offers, types, func(o launchOffering) bool { return !reserved(o) })
	if dropped = append(dropped, more...); len(dropped) > 0 {
		filtered = append(filtered, fmt.Sprintf("%s: %s", filterExoticInstance, strings.Join(dropped, ", ")))
	}
	offers, n := withoutDearSpot(offers, reqs)
	if n > 0 {
		filtered = append(filtered, fmt.Sprintf("%s: %d spot offering(s) dearer than the cheapest on-demand", filterSpotOffering, n))
	}
	return offers, filtered
}

// withoutExotic leaves out the offerings of exotic types among those in the group, when the group has an
// offering of another type; it returns the types it left out, sorted.
func withoutExotic(offers []launchOffering, types map[string]*scheduling.InstanceType, inGroup func(launchOffering) bool) ([]launchOffering, []string) {
	exotic := map[string]bool{}
	generic := false
	for _, o := range offers {
		if !inGroup(o) {
			continue
		}
		if it := types[o.override.InstanceType]; it != nil && isExotic(it) {
			exotic[o.override.InstanceType] = true
		} else {
			generic = true
		}
	}
	if !generic || len(exotic) == 0 {
		return offers, nil
	}
	out := offers[:0:0]
	for _, o := range offers {
		if !inGroup(o) || !exotic[o.override.InstanceType] {
			out = append(out, o)
		}
	}
	dropped := make([]string, 0, len(exotic))
	for name := range exotic {
		dropped = append(dropped, name)
	}
	slices.Sort(dropped)
	return out, dropped
}

// withoutDearSpot leaves out spot offerings priced above the cheapest on-demand offering, when the
// requirements allow both capacity types and both are offered; it returns how many it left out.
func withoutDearSpot(offers []launchOffering, reqs scheduling.Requirements) ([]launchOffering, int) {
	if c := reqs.Get(scheduling.LabelCapacityType); c != nil && (!c.Has(instance.CapacityTypeSpot) || !c.Has(instance.CapacityTypeOnDemand)) {
		return offers, 0
	}
	cheapestOD, hasOD, hasSpot := 0.0, false, false
	for _, o := range offers {
		switch o.capacityType {
		case instance.CapacityTypeOnDemand:
			if !hasOD || o.override.Price < cheapestOD {
				cheapestOD = o.override.Price
			}
			hasOD = true
		case instance.CapacityTypeSpot:
			hasSpot = true
		}
	}
	if !hasOD || !hasSpot {
		return offers, 0
	}
	out := offers[:0:0]
	for _, o := range offers {
		if o.capacityType == instance.CapacityTypeSpot && o.override.Price > cheapestOD {
			continue
		}
		out = append(out, o)
	}
	return out, len(offers) - len(out)
}

// hasMinValues reports whether any requirement sets minValues.
func hasMinValues(reqs scheduling.Requirements) bool {
	for _, r := range reqs {
		if r.MinValues > 0 {
			return true
		}
	}
	return false
}
