package runmetrics

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
)

func TestLifecycleMetrics(t *testing.T) {
	rep := lifecycle.RunReport{
		Usage: []lifecycle.PoolUsage{{NodePool: "default", Nodes: 2,
			Used: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("24Gi"),
				"nodes": resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("116")},
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000"), "nvidia.com/gpu": resource.MustParse("4")}}},
		NodesCreated: map[lifecycle.PoolZone]int{{NodePool: "default", Zone: "us-east-1a"}: 2},
		Offerings:    []lifecycle.OfferingPrice{{InstanceType: "m5.large", CapacityType: "spot", Zone: "us-east-1a", Price: 0.04}},
	}
	recs := emitted(t, func(w io.Writer) error { return Lifecycle(w, "prod", rep, time.Now()) })
	usage := valuesOf(recs, metrics.PoolUsage, metrics.DimNodePool, metrics.DimResourceType)
	assert.EqualValues(t, map[string]any{"default/cpu": 12.0, "default/memory": float64(24 << 30), "default/nodes": 2.0, "default/nvidia.com/gpu": 0.0},
		usage, "cpu, memory and nodes always; pods only where limited; a limited resource even when unused")
	assert.EqualValues(t, map[string]any{"default/cpu": 1000.0, "default/nvidia.com/gpu": 4.0},
		valuesOf(recs, metrics.PoolLimit, metrics.DimNodePool, metrics.DimResourceType), "no limit, no limit metric")
	assert.EqualValues(t, map[string]any{"default/us-east-1a": 2.0}, valuesOf(recs, metrics.NodesCreated, metrics.DimNodePool, metrics.DimZone))
	assert.EqualValues(t, map[string]any{"m5.large/spot/us-east-1a": 0.04}, valuesOf(recs, metrics.OfferingPriceEstimate,
		metrics.DimInstanceType, metrics.DimCapacityType, metrics.DimZone))
}

// Node repairs are counted per nodepool, condition and capacity type, as Karpenter's
// nodeclaims_unhealthy_disrupted_total (without its image_id); a run that repaired nothing writes none.
func TestRepairsBecomeKarpentersUnhealthyDisruptedMetric(t *testing.T) {
	rep := lifecycle.RunReport{Repairs: []lifecycle.Repair{
		{NodePool: "default", Node: "ip-a", Claim: "default-a", CapacityType: "spot", Condition: "ready"},
		{NodePool: "default", Node: "ip-b", Claim: "default-b", CapacityType: "spot", Condition: "ready"},
		{NodePool: "gpu", Node: "ip-c", Claim: "gpu-c", Condition: "accelerated_hardware_ready"},
	}}
	recs := emitted(t, func(w io.Writer) error { return Lifecycle(w, "prod", rep, time.Now()) })
	assert.EqualValues(t, map[string]any{"default/ready/spot": 2.0, "gpu/accelerated_hardware_ready/" + metrics.Unknown: 1.0},
		valuesOf(recs, metrics.ClaimsUnhealthyDisrupted, metrics.DimNodePool, metrics.DimCondition, metrics.DimCapacityType))

	recs = emitted(t, func(w io.Writer) error { return Lifecycle(w, "prod", lifecycle.RunReport{}, time.Now()) })
	assert.Empty(t, valuesOf(recs, metrics.ClaimsUnhealthyDisrupted, metrics.DimNodePool, metrics.DimCondition, metrics.DimCapacityType))
}
