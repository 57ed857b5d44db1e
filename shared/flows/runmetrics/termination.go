package runmetrics

import (
	"cmp"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// Termination writes what a termination batch did, after Karpenter's termination metrics:
// nodes_drained_total per nodepool; per claim terminated, nodeclaims_terminated_total (nodepool,
// capacity_type, zone) and, when it had a Node, nodes_terminated_total (nodepool, zone),
// nodes_termination_duration_seconds (request to deletion) and nodes_lifetime_duration_seconds
// (registration to deletion) per nodepool; pods_drained_total per reason, pods_eviction_requests_total per
// code, and Nodewright's termination_requests_redriven_total.
func Termination(w io.Writer, cluster string, stats termination.BatchStats, at time.Time) error {
	e := newEmitter(w, cluster, at)
	for _, pool := range slices.Sorted(maps.Keys(stats.Drained)) {
		e.one(metrics.NodesDrained, float64(stats.Drained[pool]), metrics.DimNodePool, pool)
	}
	type claimKey struct{ pool, capacityType, zone string }
	claims := map[claimKey]int{}
	nodes := map[claimKey]int{}
	took, lived := map[string][]float64{}, map[string][]float64{}
	for _, t := range stats.Terminated {
		claims[claimKey{t.NodePool, t.CapacityType, t.Zone}]++
		if t.Node {
			nodes[claimKey{pool: t.NodePool, zone: t.Zone}]++
			took[t.NodePool] = append(took[t.NodePool], t.Took.Seconds())
			lived[t.NodePool] = append(lived[t.NodePool], t.Lifetime.Seconds())
		}
	}
	byKey := func(a, b claimKey) int {
		return cmp.Or(cmp.Compare(a.pool, b.pool), cmp.Compare(a.capacityType, b.capacityType), cmp.Compare(a.zone, b.zone))
	}
	for _, k := range slices.SortedFunc(maps.Keys(claims), byKey) {
		e.one(metrics.ClaimsTerminated, float64(claims[k]), metrics.DimNodePool, k.pool, metrics.DimCapacityType, k.capacityType,
			metrics.DimZone, k.zone)
	}
	for _, k := range slices.SortedFunc(maps.Keys(nodes), byKey) {
		e.one(metrics.NodesTerminated, float64(nodes[k]), metrics.DimNodePool, k.pool, metrics.DimZone, k.zone)
	}
	for _, pool := range slices.Sorted(maps.Keys(took)) {
		e.samples(metrics.NodesTerminationDuration, took[pool], metrics.DimNodePool, pool)
		e.samples(metrics.NodesLifetime, lived[pool], metrics.DimNodePool, pool)
	}
	for _, reason := range slices.Sorted(maps.Keys(stats.PodsDrained)) {
		e.one(metrics.PodsDrained, float64(stats.PodsDrained[reason]), metrics.DimReason, reason)
	}
	for _, code := range slices.Sorted(maps.Keys(stats.Evictions)) {
		e.one(metrics.EvictionRequests, float64(stats.Evictions[code]), metrics.DimCode, code)
	}
	if stats.Redriven > 0 {
		e.one(metrics.TerminationRedriven, float64(stats.Redriven))
	}
	return e.err
}
