package main

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// benchInput is one named comparison input: pending pods, one NodePool without requirements, and
// a catalog. Both schedulers get a fresh deep copy of the pods.
type benchInput struct {
	Name  string
	Pods  []*corev1.Pod
	Types []*scheduling.InstanceType
}

// seed is the seed of Nodewright's benchmarks (solver_bench_test.go).
const seed = 42

// karpenterMixInput is Karpenter's benchmark mix on its 400-type catalog, as in
// BenchmarkSolveKarpenterMix*Pods.
func karpenterMixInput(pods int) benchInput {
	return benchInput{
		Name:  "karpenter-mix",
		Pods:  schedulingtest.KarpenterMix(pods, seed),
		Types: schedulingtest.InstanceTypes(400),
	}
}

// realisticInput is the mixed deployment workload on the realistic catalog (cost_test.go uses
// scale 20, i.e. 2000 pods; the benchmarks scale 50, i.e. 5000 pods).
func realisticInput(scale int) benchInput {
	return benchInput{
		Name:  "realistic-mixed",
		Pods:  schedulingtest.DeploymentPods(schedulingtest.MixedWorkload(scale)),
		Types: schedulingtest.RealisticInstanceTypes(),
	}
}

// zoneSpreadInput is the realistic mix with every deployment spread over zones (maxSkew 1), as in
// TestZoneSpreadCost and BenchmarkSolveRealisticZoneSpread5000Pods.
func zoneSpreadInput(scale int) benchInput {
	pods := schedulingtest.DeploymentPods(schedulingtest.MixedWorkload(scale))
	for _, p := range pods {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: scheduling.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}},
		}}
	}
	return benchInput{Name: "realistic-zone-spread", Pods: pods, Types: schedulingtest.RealisticInstanceTypes()}
}

// buildInputs returns the inputs for the requested Karpenter-mix pod counts and realistic scales.
func buildInputs(mixPods, realisticScales []int) ([]benchInput, error) {
	var out []benchInput
	for _, n := range mixPods {
		if n <= 0 {
			return nil, fmt.Errorf("-pods: %d is not a positive pod count", n)
		}
		out = append(out, karpenterMixInput(n))
	}
	for _, s := range realisticScales {
		if s <= 0 {
			return nil, fmt.Errorf("-scales: %d is not a positive scale (100 pods each)", s)
		}
		out = append(out, realisticInput(s), zoneSpreadInput(s))
	}
	return out, nil
}

// copyPods deep-copies pods so that no solver sees another's changes.
func copyPods(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}
