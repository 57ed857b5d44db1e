package runmetrics

import (
	"cmp"
	"io"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// capacityResources are the resources the node metrics report: Karpenter reports every resource a node
// has, one series each; cpu and memory are what a capacity dashboard reads, and each other resource
// would add a series per NodePool and metric to the bill.
var capacityResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// Provisioner writes what a provisioning invocation did:
//   - scheduler_queue_depth (the provisionable pods the last run saw) and
//     scheduler_unschedulable_pods_count, on every run that held the lease (the unschedulable-pods alarm
//     reads the minimum of the latter, so a run without pending pods writes its zero);
//   - scheduler_scheduling_duration_seconds and provisioner_inflight_nodeclaims, by runs that solved;
//   - nodeclaims_created_total per nodepool, cloudprovider_instance_launch_failures_total per nodepool and
//     reason, provisioner_launches_never_succeed_total (unauthorized or invalid launches: an alarm) and
//     provisioner_coalesced_triggers_total, when they counted something;
//   - the capacity the run summed (Outcome.Capacity, once a minute): see capacity.
func Provisioner(w io.Writer, cluster string, out provisioning.Outcome, at time.Time) error {
	e := newEmitter(w, cluster, at)
	if out.Coalesced {
		e.one(metrics.CoalescedTriggers, float64(out.Trigger.Messages))
		return e.err
	}
	// Every run of the invocation launched what it launched, whatever the last one found.
	created := map[string]int{}
	for _, c := range out.Launched {
		created[c.NodePool]++
	}
	for _, pool := range slices.Sorted(maps.Keys(created)) {
		e.one(metrics.ClaimsCreated, float64(created[pool]), metrics.DimNodePool, pool)
	}
	if out.Capacity != nil {
		capacity(e, *out.Capacity)
	}
	rep := out.Report
	if out.Err != nil || !rep.Lease {
		return e.err
	}
	gauges := map[string]float64{
		metrics.SchedulerQueueDepth:        float64(rep.PendingPods),
		metrics.SchedulerUnschedulablePods: float64(len(rep.Unschedulable)),
	}
	if rep.PendingPods > 0 {
		gauges[metrics.SchedulingDuration] = rep.SolveDuration.Seconds()
		gauges[metrics.InflightClaims] = float64(rep.InFlight)
	}
	e.values(gauges)
	never := 0
	type key struct{ pool, reason string }
	failures := map[key]int{}
	for _, f := range rep.LaunchFailures {
		failures[key{f.NodePool, f.Reason}]++
		if f.NeverSucceeds() {
			never++
		}
	}
	if never > 0 {
		e.one(metrics.LaunchesNeverSucceed, float64(never))
	}
	keys := slices.SortedFunc(maps.Keys(failures), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.pool, b.pool), cmp.Compare(a.reason, b.reason))
	})
	for _, k := range keys {
		e.one(metrics.LaunchFailures, float64(failures[k]), metrics.DimNodePool, k.pool, metrics.DimReason, k.reason)
	}
	return e.err
}

// capacity writes Karpenter's node metrics summed per NodePool with Nodewright Nodes (nodes_allocatable,
// nodes_system_overhead, nodes_total_pod_requests, nodes_total_daemon_requests by resource_type),
// pods_state per NodePool and phase, cluster_utilization_percent (pod requests over allocatable of all
// of them, by resource_type) and pods_startup_duration_seconds, one datapoint per pod that became Ready.
func capacity(e *emitter, c provisioning.Capacity) {
	var alloc, requested scheduling.Resources
	for _, p := range c.Pools {
		alloc, requested = alloc.Add(p.Allocatable), requested.Add(p.PodRequests)
		for _, r := range capacityResources {
			e.values(map[string]float64{
				metrics.NodesAllocatable:    quantity(p.Allocatable, r),
				metrics.NodesSystemOverhead: quantity(p.Overhead, r),
				metrics.NodesPodRequests:    quantity(p.PodRequests, r),
				metrics.NodesDaemonRequests: quantity(p.DaemonRequests, r),
			}, metrics.DimNodePool, p.NodePool, metrics.DimResourceType, string(r))
		}
		for _, phase := range slices.Sorted(maps.Keys(p.Pods)) {
			e.one(metrics.PodsState, float64(p.Pods[phase]), metrics.DimNodePool, p.NodePool, metrics.DimPhase, string(phase))
		}
	}
	for _, r := range capacityResources {
		if a := quantity(alloc, r); a > 0 {
			e.one(metrics.ClusterUtilization, 100*quantity(requested, r)/a, metrics.DimResourceType, string(r))
		}
	}
	e.samples(metrics.PodsStartupDuration, seconds(c.Startup))
}

// quantity is r of res in the metric's unit: cores for cpu, bytes for memory.
func quantity(res scheduling.Resources, r corev1.ResourceName) float64 {
	switch r {
	case corev1.ResourceCPU:
		return float64(res.CPU) / 1000
	case corev1.ResourceMemory:
		return float64(res.Memory)
	}
	return 0
}
