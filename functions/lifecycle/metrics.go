package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
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

// writeRepairs counts the node repairs a run requested as Karpenter's nodeclaims_unhealthy_disrupted_total
// (dimensions ClusterName, NodePool, Condition: ready, accelerated_hardware_ready, instance_status...,
// CapacityType). Karpenter's image_id label is left out: one metric per AMI would multiply the metrics
// billed for what the decision records already name. Nothing is written for a run that repaired nothing.
func writeRepairs(w io.Writer, cluster string, repairs []lifecycle.Repair, at time.Time) error {
	counts := map[[3]string]int{}
	for _, r := range repairs {
		counts[[3]string{r.NodePool, r.Condition, metrics.OrUnknown(r.CapacityType)}]++
	}
	keys := make([][3]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [3]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]), strings.Compare(a[2], b[2]))
	})
	for _, k := range keys {
		if err := metrics.Write(w, metrics.Record{
			Dimensions: map[string]string{"ClusterName": cluster, "NodePool": k[0], "Condition": k[1], "CapacityType": k[2]},
			Values:     map[string]float64{"nodeclaims_unhealthy_disrupted_total": float64(counts[k])},
		}, at); err != nil {
			return fmt.Errorf("nodepool %s: %w", k[0], err)
		}
	}
	return nil
}
