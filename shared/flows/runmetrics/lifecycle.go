package runmetrics

import (
	"cmp"
	"io"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
)

// usageResources are the resources whose NodePool usage is written whether or not the NodePool limits
// them; any other resource is written only where it is limited (Karpenter writes every resource).
var usageResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, "nodes"}

// Lifecycle writes what a lifecycle run found: each NodePool's nodepools_usage (nodepool, resource_type:
// cpu, memory, nodes, and the resources it limits) and nodepools_limit where it has one, from the run's
// last sweep; nodes_created_total per nodepool and zone (Nodes registered); and
// cloudprovider_instance_type_offering_price_estimate of the offerings Nodewright's Nodes run on; and
// nodeclaims_unhealthy_disrupted_total per nodepool, condition (ready, accelerated_hardware_ready,
// instance_status...) and capacity_type for the node repairs the run requested (NodeRepair gate).
func Lifecycle(w io.Writer, cluster string, rep lifecycle.RunReport, at time.Time) error {
	e := newEmitter(w, cluster, at)
	for _, u := range rep.Usage {
		resources := slices.Clone(usageResources)
		for _, name := range slices.Sorted(maps.Keys(u.Limits)) {
			if !slices.Contains(resources, name) {
				resources = append(resources, name)
			}
		}
		for _, r := range resources {
			used := u.Used[r]
			values := map[string]float64{metrics.PoolUsage: used.AsApproximateFloat64()}
			if limit, ok := u.Limits[r]; ok {
				values[metrics.PoolLimit] = limit.AsApproximateFloat64()
			}
			e.values(values, metrics.DimNodePool, u.NodePool, metrics.DimResourceType, string(r))
		}
	}
	keys := slices.SortedFunc(maps.Keys(rep.NodesCreated), func(a, b lifecycle.PoolZone) int {
		return cmp.Or(cmp.Compare(a.NodePool, b.NodePool), cmp.Compare(a.Zone, b.Zone))
	})
	for _, k := range keys {
		e.one(metrics.NodesCreated, float64(rep.NodesCreated[k]), metrics.DimNodePool, k.NodePool, metrics.DimZone, k.Zone)
	}
	for _, o := range rep.Offerings {
		e.one(metrics.OfferingPriceEstimate, o.Price, metrics.DimInstanceType, o.InstanceType,
			metrics.DimCapacityType, o.CapacityType, metrics.DimZone, o.Zone)
	}
	repairs := map[[3]string]int{}
	for _, r := range rep.Repairs {
		repairs[[3]string{r.NodePool, r.Condition, metrics.OrUnknown(r.CapacityType)}]++
	}
	for _, k := range slices.SortedFunc(maps.Keys(repairs), func(a, b [3]string) int { return slices.Compare(a[:], b[:]) }) {
		e.one(metrics.ClaimsUnhealthyDisrupted, float64(repairs[k]), metrics.DimNodePool, k[0], metrics.DimCondition, k[1],
			metrics.DimCapacityType, k[2])
	}
	return e.err
}
