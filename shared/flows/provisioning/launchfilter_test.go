package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// withDevices gives an instance type count devices of resource (nvidia.com/gpu, aws.amazon.com/neuron...).
func withDevices(it *scheduling.InstanceType, resource string, count int64) *scheduling.InstanceType {
	it.Capacity.Extended = map[string]int64{resource: count}
	it.Allocatable.Extended = map[string]int64{resource: count}
	return it
}

func offer(capacityType, instanceType, zone string, price float64) launchOffering {
	return launchOffering{capacityType: capacityType, image: "ami-amd64",
		override: instance.Override{InstanceType: instanceType, Zone: zone, Price: price}}
}

func offeredTypes(offers []launchOffering) []string {
	var out []string
	for _, o := range offers {
		out = append(out, o.capacityType+" "+o.override.InstanceType)
	}
	return out
}

func requirements(t *testing.T, specs ...scheduling.NodeSelectorRequirement) scheduling.Requirements {
	t.Helper()
	reqs, err := scheduling.RequirementsFromSpecs(specs)
	require.NoError(t, err)
	return reqs
}

func TestIsExotic(t *testing.T) {
	cases := map[string]struct {
		it   *scheduling.InstanceType
		want bool
	}{
		"general purpose": {instanceType("m5.xlarge", "amd64", 4, 0.192), false},
		"metal":           {instanceType("m5.metal", "amd64", 96, 4.608), true},
		"metal-48xl":      {instanceType("c7i.metal-48xl", "amd64", 192, 8.568), true},
		"nvidia gpu":      {withDevices(instanceType("g5.xlarge", "amd64", 4, 1.006), scheduling.ResourceNVIDIAGPU, 1), true},
		"amd gpu":         {withDevices(instanceType("g4ad.xlarge", "amd64", 4, 0.379), scheduling.ResourceAMDGPU, 1), true},
		"neuron":          {withDevices(instanceType("inf2.xlarge", "amd64", 4, 0.758), scheduling.ResourceNeuron, 1), true},
		"neuron cores":    {withDevices(instanceType("trn1.2xlarge", "amd64", 8, 1.344), scheduling.ResourceNeuronCore, 2), true},
		"gaudi":           {withDevices(instanceType("dl1.24xlarge", "amd64", 96, 13.1), scheduling.ResourceHabanaGaudi, 8), true},
		"zero devices":    {withDevices(instanceType("m5.large", "amd64", 2, 0.096), scheduling.ResourceNVIDIAGPU, 0), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, isExotic(tc.it)) })
	}
}

func exoticWorld() map[string]*scheduling.InstanceType {
	types := map[string]*scheduling.InstanceType{}
	for _, it := range []*scheduling.InstanceType{
		instanceType("m5.xlarge", "amd64", 4, 0.192),
		instanceType("m5.metal", "amd64", 96, 4.608),
		withDevices(instanceType("inf2.xlarge", "amd64", 4, 0.758), scheduling.ResourceNeuron, 1),
		withDevices(instanceType("g5.xlarge", "amd64", 4, 1.006), scheduling.ResourceNVIDIAGPU, 1),
	} {
		types[it.Name] = it
	}
	return types
}

func TestExoticFilterLeavesOutExoticTypesWhenOthersRemain(t *testing.T) {
	offers := []launchOffering{
		offer("spot", "inf2.xlarge", "us-east-1a", 0.1),
		offer("on-demand", "m5.metal", "us-east-1a", 0.15),
		offer("on-demand", "m5.xlarge", "us-east-1a", 0.192),
		offer("on-demand", "g5.xlarge", "us-east-1a", 1.006),
	}
	kept, filtered := filterOfferings(offers, exoticWorld(), requirements(t))
	assert.Equal(t, []string{"on-demand m5.xlarge"}, offeredTypes(kept),
		"exotic types go even when they are cheaper, and a generic type offered only on-demand is enough")
	assert.Equal(t, []string{"exotic-instance-filter: g5.xlarge, inf2.xlarge, m5.metal"}, filtered)
}

func TestExoticFilterKeepsExoticTypesWhenNothingElseFits(t *testing.T) {
	offers := []launchOffering{
		offer("spot", "inf2.xlarge", "us-east-1a", 0.3),
		offer("on-demand", "inf2.xlarge", "us-east-1a", 0.758),
		offer("on-demand", "g5.xlarge", "us-east-1a", 1.006),
	}
	kept, filtered := filterOfferings(offers, exoticWorld(), requirements(t))
	assert.Equal(t, offeredTypes(offers), offeredTypes(kept), "only exotic types: the launch keeps them all")
	assert.Empty(t, filtered)
}

func TestExoticFilterJudgesReservedOfferingsAmongThemselves(t *testing.T) {
	offers := []launchOffering{
		offer("reserved", "g5.xlarge", "us-east-1a", 0),
		offer("on-demand", "m5.xlarge", "us-east-1a", 0.192),
		offer("on-demand", "g5.xlarge", "us-east-1a", 1.006),
	}
	kept, filtered := filterOfferings(offers, exoticWorld(), requirements(t))
	assert.Equal(t, []string{"reserved g5.xlarge", "on-demand m5.xlarge"}, offeredTypes(kept),
		"a reservation of GPU instances is still used first; the on-demand fallback takes the generic type")
	assert.Equal(t, []string{"exotic-instance-filter: g5.xlarge"}, filtered)
}

func TestSpotOfferingFilterLeavesOutSpotDearerThanCheapestOnDemand(t *testing.T) {
	offers := []launchOffering{
		offer("spot", "m5.xlarge", "us-east-1a", 0.08),
		offer("spot", "m5.xlarge", "us-east-1b", 0.2),  // dearer than on-demand c5.xlarge
		offer("spot", "c5.xlarge", "us-east-1a", 0.17), // as dear: kept
		offer("on-demand", "c5.xlarge", "us-east-1a", 0.17),
		offer("on-demand", "m5.xlarge", "us-east-1a", 0.192),
	}
	types := map[string]*scheduling.InstanceType{"m5.xlarge": instanceType("m5.xlarge", "amd64", 4, 0.192), "c5.xlarge": instanceType("c5.xlarge", "amd64", 4, 0.17)}
	kept, filtered := filterOfferings(offers, types, requirements(t))
	assert.Equal(t, []string{"spot m5.xlarge", "spot c5.xlarge", "on-demand c5.xlarge", "on-demand m5.xlarge"}, offeredTypes(kept))
	assert.Equal(t, []string{"spot-offering-filter: 1 spot offering(s) dearer than the cheapest on-demand"}, filtered)

	spotOnly := requirements(t, scheduling.NodeSelectorRequirement{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"spot"}})
	kept, filtered = filterOfferings(offers, types, spotOnly)
	assert.Len(t, kept, len(offers), "with spot alone allowed there is no on-demand to compare with")
	assert.Empty(t, filtered)

	kept, _ = filterOfferings(offers[:3], types, requirements(t))
	assert.Len(t, kept, 3, "no on-demand offering: nothing to compare with")
}

func TestLaunchFiltersStandAsideForMinValues(t *testing.T) {
	two := 2
	reqs := requirements(t, scheduling.NodeSelectorRequirement{Key: scheduling.LabelInstanceFamily, Operator: scheduling.OpExists, MinValues: &two})
	offers := []launchOffering{
		offer("spot", "m5.xlarge", "us-east-1a", 0.3),
		offer("on-demand", "m5.xlarge", "us-east-1a", 0.192),
		offer("on-demand", "g5.xlarge", "us-east-1a", 1.006),
	}
	kept, filtered := filterOfferings(offers, exoticWorld(), reqs)
	assert.Equal(t, offeredTypes(offers), offeredTypes(kept), "leaving types or offerings out could break minValues, as in Karpenter")
	assert.Empty(t, filtered)
}

func TestBuildLaunchPlanFiltersBeforeMakingTemplates(t *testing.T) {
	class := testClass(
		instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a"),
		withDevices(instanceType("inf2.xlarge", "amd64", 4, 0.12, "us-east-1a"), scheduling.ResourceNeuron, 1),
	)
	target := claimTarget{claim: scheduling.ClaimPlan{InstanceTypeOptions: []string{"inf2.xlarge", "m5.xlarge"}}, class: class,
		cluster: launchtemplate.Cluster{Name: "demo"}}
	templates := &fakeTemplates{}
	plan, err := buildLaunchPlan(context.Background(), templates, target, instance.Request{})
	require.NoError(t, err)
	var types []string
	for _, o := range append(plan.Spot, plan.OnDemand...) {
		types = append(types, o.InstanceType)
	}
	assert.Equal(t, []string{"m5.xlarge", "m5.xlarge"}, types, "the cheaper Neuron type is left out for pods any type fits")
	assert.Equal(t, []string{"exotic-instance-filter: inf2.xlarge"}, plan.Filtered)
	assert.Len(t, templates.made, 2, "one template per capacity type, none for what was filtered out")
}
