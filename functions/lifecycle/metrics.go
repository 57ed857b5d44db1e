package main

import (
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/lifecycle"
	"github.com/nodewright/nodewright/shared/metrics"
)

// usageResources are the resources whose NodePool usage and limits become metrics, with their units.
var usageResources = []struct {
	name corev1.ResourceName
	unit string
}{{corev1.ResourceCPU, "Count"}, {corev1.ResourceMemory, "Bytes"}, {"nodes", "Count"}, {corev1.ResourcePods, "Count"}}

// writeUsage writes each NodePool's usage, and its limit where it has one, as Karpenter's
// nodepools_usage and nodepools_limit metrics (dimensions ClusterName, NodePool, ResourceType).
func writeUsage(w io.Writer, cluster string, usage []lifecycle.PoolUsage, at time.Time) error {
	for _, u := range usage {
		for _, r := range usageResources {
			used := u.Used[r.name]
			rec := metrics.Record{
				Dimensions: map[string]string{"ClusterName": cluster, "NodePool": u.NodePool, "ResourceType": string(r.name)},
				Values:     map[string]float64{"nodepools_usage": used.AsApproximateFloat64()},
				Units:      map[string]string{"nodepools_usage": r.unit, "nodepools_limit": r.unit},
			}
			if limit, ok := u.Limits[r.name]; ok {
				rec.Values["nodepools_limit"] = limit.AsApproximateFloat64()
			}
			if err := metrics.Write(w, rec, at); err != nil {
				return fmt.Errorf("nodepool %s %s: %w", u.NodePool, r.name, err)
			}
		}
	}
	return nil
}
