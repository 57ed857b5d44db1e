package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestCostNearLowerBound asserts that plans stay within a stated factor of the LP lower bound. The
// factors are what the current algorithm achieves plus a small margin; a regression fails here.
func TestCostNearLowerBound(t *testing.T) {
	tests := []struct {
		name     string
		pods     []*corev1.Pod
		types    []*scheduling.InstanceType
		maxRatio float64
	}{
		{name: "uniform pods, benchmark catalog", pods: Pods(2000, PodOptions{Name: "u", Owner: "u", CPU: "500m", Memory: "1Gi"}), types: InstanceTypes(400), maxRatio: 1.02},
		{name: "random pods, benchmark catalog", pods: RandomPods(1000, 42), types: InstanceTypes(400), maxRatio: 1.02},
		// Uniform 1 CPU / 2Gi pods match no type's shape here, so the CPU/memory LP (which may put the
		// CPU on c-types and the memory on m-types) is 14% below the true optimum; see
		// TestUniformPodsNearOptimum for the exact comparison.
		{name: "uniform pods, realistic catalog", pods: Pods(1000, PodOptions{Name: "u", Owner: "u", CPU: "1", Memory: "2Gi"}), types: RealisticInstanceTypes(), maxRatio: 1.15},
		{name: "random pods, realistic catalog", pods: RandomPods(1000, 42), types: RealisticInstanceTypes(), maxRatio: 1.03},
		{name: "mixed deployments, realistic catalog", pods: DeploymentPods(MixedWorkload(20)), types: RealisticInstanceTypes(), maxRatio: 1.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := scheduling.Solve(scheduling.Input{Pods: tt.pods, NodePools: pools(NodePool("default")), InstanceTypes: tt.types})
			require.NoError(t, err)
			require.Empty(t, plan.Unschedulable)
			require.Positive(t, plan.LowerBound)
			t.Logf("%d claims, $%.4f/h, lower bound $%.4f/h, ratio %.4f", len(plan.NewClaims), plan.TotalPrice, plan.LowerBound, plan.CostRatio())
			assert.GreaterOrEqual(t, plan.CostRatio(), 1.0-1e-9, "a plan cannot beat the lower bound")
			assert.LessOrEqual(t, plan.CostRatio(), tt.maxRatio)
		})
	}
}

// TestUniformPodsNearOptimum compares plans for identical pods with a bound that is tight for them:
// n pods cost at least n × min over types of price / (pods that fit one node).
func TestUniformPodsNearOptimum(t *testing.T) {
	tests := []struct {
		name        string
		n           int
		cpu, memory string
		types       []*scheduling.InstanceType
		maxRatio    float64
	}{
		{name: "1 CPU 2Gi, realistic", n: 1000, cpu: "1", memory: "2Gi", types: RealisticInstanceTypes(), maxRatio: 1.01},
		{name: "250m 512Mi, realistic", n: 3000, cpu: "250m", memory: "512Mi", types: RealisticInstanceTypes(), maxRatio: 1.01},
		{name: "500m 6Gi, realistic", n: 500, cpu: "500m", memory: "6Gi", types: RealisticInstanceTypes(), maxRatio: 1.02},
		{name: "3 CPU 3Gi, benchmark catalog", n: 500, cpu: "3", memory: "3Gi", types: InstanceTypes(400), maxRatio: 1.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := Pods(tt.n, PodOptions{Name: "u", Owner: "u", CPU: tt.cpu, Memory: tt.memory})
			req := scheduling.PodRequests(pods[0])
			best := 0.0
			for _, it := range tt.types {
				o, ok := it.CheapestOffering(scheduling.Requirements{}, nil)
				require.True(t, ok)
				fit := min(it.Allocatable.CPU/req.CPU, it.Allocatable.Memory/req.Memory, it.Allocatable.Pods)
				if fit > 0 && (best == 0 || o.Price/float64(fit) < best) {
					best = o.Price / float64(fit)
				}
			}
			optimum := best * float64(tt.n)
			plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: tt.types})
			require.NoError(t, err)
			require.Empty(t, plan.Unschedulable)
			t.Logf("%d claims, $%.4f/h, per-pod optimum $%.4f/h, ratio %.4f", len(plan.NewClaims), plan.TotalPrice, optimum, plan.TotalPrice/optimum)
			assert.LessOrEqual(t, plan.TotalPrice, tt.maxRatio*optimum)
		})
	}
}

// zoneSpread gives every pod a zone spread constraint (maxSkew 1) over its deployment.
func zoneSpread(pods []*corev1.Pod) []*corev1.Pod {
	for _, p := range pods {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelZone,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}}
	}
	return pods
}

// TestZoneSpreadCost compares a zone-spread plan with a bound that knows the spread: each zone must
// host a third of the demand at that zone's prices (spot prices differ by zone), so the plain bound,
// which would put everything in the cheapest zone, does not apply.
func TestZoneSpreadCost(t *testing.T) {
	pods := zoneSpread(DeploymentPods(MixedWorkload(20)))
	types := RealisticInstanceTypes()
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: types})
	require.NoError(t, err)
	require.Empty(t, plan.Unschedulable)
	var cpu, memory float64
	for _, p := range pods {
		r := scheduling.PodRequests(p)
		cpu += float64(r.CPU)
		memory += float64(r.Memory)
	}
	bound := 0.0
	for _, z := range Zones {
		var caps []scheduling.Capacity
		for _, it := range types {
			o, ok := it.CheapestOffering(scheduling.NewRequirements(scheduling.MustRequirement(scheduling.LabelZone, scheduling.OpIn, z)), nil)
			require.True(t, ok)
			caps = append(caps, scheduling.Capacity{CPU: float64(it.Allocatable.CPU), Memory: float64(it.Allocatable.Memory), Price: o.Price})
		}
		bound += scheduling.LowerBound(cpu/3, memory/3, caps)
	}
	ratio := plan.TotalPrice / bound
	t.Logf("%d claims, $%.4f/h, plain bound $%.4f/h (ratio %.4f), zone-aware bound $%.4f/h (ratio %.4f)",
		len(plan.NewClaims), plan.TotalPrice, plan.LowerBound, plan.CostRatio(), bound, ratio)
	// Measured 1.062 (1.138 before claims were re-packed per zone, repack.go). Most of what is left is
	// the bound's: its cheapest types per zone are too small for the 8 CPU / 32Gi pods, and the LP
	// over the types that hold every pod is about 3% higher.
	assert.LessOrEqual(t, ratio, 1.07)
}
