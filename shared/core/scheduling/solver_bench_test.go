package scheduling_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func benchmarkSolve(b *testing.B, pods int) {
	in := scheduling.Input{
		Pods:          schedulingtest.RandomPods(pods, 42),
		NodePools:     []scheduling.NodePool{schedulingtest.NodePool("default")},
		InstanceTypes: schedulingtest.InstanceTypes(400),
	}
	b.ReportAllocs()
	b.ResetTimer()
	var plan *scheduling.Plan
	for b.Loop() {
		var err error
		plan, err = scheduling.Solve(in)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(plan.Unschedulable) != 0 {
		b.Fatalf("%d pods unschedulable: %s", len(plan.Unschedulable), plan.Unschedulable[0].Reason)
	}
	b.ReportMetric(float64(pods)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(plan.CostRatio(), "cost/lowerbound")
}

func BenchmarkSolve1000Pods(b *testing.B) { benchmarkSolve(b, 1000) }
func BenchmarkSolve5000Pods(b *testing.B) { benchmarkSolve(b, 5000) }

// benchmarkKarpenterMix runs Karpenter's own benchmark input: 400 instance types and five equal groups
// of random pods (plain, zone spread, hostname spread, zone self-affinity, hostname anti-affinity).
func benchmarkKarpenterMix(b *testing.B, pods int) {
	in := scheduling.Input{
		Pods:          schedulingtest.KarpenterMix(pods, 42),
		NodePools:     []scheduling.NodePool{schedulingtest.NodePool("default")},
		InstanceTypes: schedulingtest.InstanceTypes(400),
	}
	b.ReportAllocs()
	var plan *scheduling.Plan
	for b.Loop() {
		var err error
		plan, err = scheduling.Solve(in)
		if err != nil {
			b.Fatal(err)
		}
	}
	if len(plan.Unschedulable) != 0 {
		b.Fatalf("%d pods unschedulable: %s", len(plan.Unschedulable), plan.Unschedulable[0].Reason)
	}
	b.ReportMetric(float64(pods)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64(len(plan.NewClaims)), "claims")
}

func BenchmarkSolveKarpenterMix1Pod(b *testing.B)      { benchmarkKarpenterMix(b, 1) }
func BenchmarkSolveKarpenterMix100Pods(b *testing.B)   { benchmarkKarpenterMix(b, 100) }
func BenchmarkSolveKarpenterMix1000Pods(b *testing.B)  { benchmarkKarpenterMix(b, 1000) }
func BenchmarkSolveKarpenterMix5000Pods(b *testing.B)  { benchmarkKarpenterMix(b, 5000) }
func BenchmarkSolveKarpenterMix20000Pods(b *testing.B) { benchmarkKarpenterMix(b, 20000) }

func BenchmarkSolveRealistic5000Pods(b *testing.B) {
	benchmarkRealistic(b, schedulingtest.DeploymentPods(schedulingtest.MixedWorkload(50)))
}

// BenchmarkSolveRealisticZoneSpread5000Pods is the same workload with every deployment spread over
// zones (maxSkew 1).
func BenchmarkSolveRealisticZoneSpread5000Pods(b *testing.B) {
	benchmarkRealistic(b, zoneSpread(schedulingtest.DeploymentPods(schedulingtest.MixedWorkload(50))))
}

func benchmarkRealistic(b *testing.B, pods []*corev1.Pod) {
	in := scheduling.Input{
		Pods:          pods,
		NodePools:     []scheduling.NodePool{schedulingtest.NodePool("default")},
		InstanceTypes: schedulingtest.RealisticInstanceTypes(),
	}
	b.ReportAllocs()
	var plan *scheduling.Plan
	for b.Loop() {
		plan, _ = scheduling.Solve(in)
	}
	b.ReportMetric(float64(len(in.Pods))*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(plan.CostRatio(), "cost/lowerbound")
}
