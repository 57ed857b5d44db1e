package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	provsched "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	karpsched "sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// claim builds a NodeClaim as Karpenter's scheduler returns it: pods, requirements, options.
func claim(t *testing.T, types []*scheduling.InstanceType, reqs karpsched.Requirements, pods ...*corev1.Pod) *provsched.NodeClaim {
	t.Helper()
	options, err := toKarpenterInstanceTypes(types)
	require.NoError(t, err)
	return &provsched.NodeClaim{NodeClaimTemplate: provsched.NodeClaimTemplate{InstanceTypeOptions: options, Requirements: reqs}, Pods: pods}
}

func cheapest(t *testing.T, types []*scheduling.InstanceType, reqs scheduling.Requirements) float64 {
	t.Helper()
	best := 0.0
	for _, it := range types {
		o, ok := it.CheapestOffering(reqs, nil)
		require.True(t, ok)
		if best == 0 || o.Price < best {
			best = o.Price
		}
	}
	return best
}

func TestLaunchOfferingPrefersSpotThenCheapest(t *testing.T) {
	types := schedulingtest.RealisticInstanceTypes()[:2] // c5.large, c5.xlarge
	pod := schedulingtest.Pod(schedulingtest.PodOptions{CPU: "500m", Memory: "1Gi"})
	spot := scheduling.NewRequirements(scheduling.MustRequirement(scheduling.LabelCapacityType, scheduling.OpIn, scheduling.CapacityTypeSpot))

	o, err := launchOffering(claim(t, types, karpsched.NewRequirements(), pod))
	require.NoError(t, err)
	assert.Equal(t, karpv1.CapacityTypeSpot, o.CapacityType())
	assert.InDelta(t, cheapest(t, types, spot), o.Price, 1e-9)

	onDemand := karpsched.NewRequirements(karpsched.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand))
	o, err = launchOffering(claim(t, types, onDemand, pod))
	require.NoError(t, err)
	assert.Equal(t, karpv1.CapacityTypeOnDemand, o.CapacityType())
	assert.InDelta(t, types[0].Offerings[1].Price, o.Price, 1e-9)
}

func TestLaunchOfferingSkipsTypesTooSmall(t *testing.T) {
	types := schedulingtest.InstanceTypes(4) // 1..4 vCPUs, price grows with size
	pod := schedulingtest.Pod(schedulingtest.PodOptions{CPU: "3500m", Memory: "1Gi"})
	o, err := launchOffering(claim(t, types, karpsched.NewRequirements(), pod))
	require.NoError(t, err)
	assert.InDelta(t, 0.1*4+0.1*8, o.Price, 1e-9, "only the 4-vCPU type fits 3.5 CPU")

	big := schedulingtest.Pod(schedulingtest.PodOptions{CPU: "10", Memory: "1Gi"})
	_, err = launchOffering(claim(t, types, karpsched.NewRequirements(), big))
	require.ErrorContains(t, err, "no available offering fits its requests")
}
