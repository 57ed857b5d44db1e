package runmetrics

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

func provisionerRecords(t *testing.T, out provisioning.Outcome) []map[string]any {
	t.Helper()
	return emitted(t, func(w io.Writer) error { return Provisioner(w, "prod", out, time.Now()) })
}

func TestProvisionerMetrics(t *testing.T) {
	// Three runs: the first launched two claims, the second one, the last (the report) nothing.
	run := provisioning.Outcome{Report: provisioning.Report{Lease: true, PendingPods: 30, InFlight: 3, SolveDuration: 14 * time.Millisecond,
		Unschedulable: []provisioning.UnschedulablePod{{Pod: "ns/p"}}},
		Launched: []provisioning.LaunchedClaim{{NodePool: "default"}, {NodePool: "default"}, {NodePool: "gpu"}}, Runs: 3}
	recs := provisionerRecords(t, run)
	assert.EqualValues(t, map[string]any{"default": 2.0, "gpu": 1.0}, valuesOf(recs, metrics.ClaimsCreated, metrics.DimNodePool),
		"every run's launches count, not only the last run's")
	assert.EqualValues(t, map[string]any{"": 30.0}, valuesOf(recs, metrics.SchedulerQueueDepth))
	assert.EqualValues(t, map[string]any{"": 1.0}, valuesOf(recs, metrics.SchedulerUnschedulablePods))
	assert.EqualValues(t, map[string]any{"": 3.0}, valuesOf(recs, metrics.InflightClaims))
	assert.InDelta(t, 0.014, valuesOf(recs, metrics.SchedulingDuration)[""], 1e-9)

	coalesced := provisionerRecords(t, provisioning.Outcome{Coalesced: true, Trigger: provisioning.Trigger{Messages: 10}})
	assert.EqualValues(t, map[string]any{"": 10.0}, valuesOf(coalesced, metrics.CoalescedTriggers))

	assert.Empty(t, provisionerRecords(t, provisioning.Outcome{Report: provisioning.Report{Lease: false}}),
		"another run held the lease: nothing to say")
}

func TestARunWithoutPendingPodsWritesOnlyTheQueueGauges(t *testing.T) {
	recs := provisionerRecords(t, provisioning.Outcome{Report: provisioning.Report{Lease: true}})
	assert.Equal(t, map[string]bool{metrics.SchedulerQueueDepth: true, metrics.SchedulerUnschedulablePods: true}, names(recs),
		"no solve, no scheduling duration; the alarm's minimum needs the zero")
}

func TestLaunchFailureMetrics(t *testing.T) {
	run := provisioning.Outcome{Report: provisioning.Report{Lease: true, LaunchFailures: []provisioning.LaunchFailure{
		{NodePool: "default", Reason: "Unauthorized"}, {NodePool: "default", Reason: "Unauthorized"},
		{NodePool: "default", Reason: "InsufficientCapacity"}, {NodePool: "gpu", Reason: "LaunchOutcomeUnknown", Pending: true},
	}}}
	recs := provisionerRecords(t, run)
	assert.EqualValues(t, map[string]any{"": 2.0}, valuesOf(recs, metrics.LaunchesNeverSucceed), "only the unauthorized ones")
	assert.EqualValues(t, map[string]any{"default/Unauthorized": 2.0, "default/InsufficientCapacity": 1.0, "gpu/LaunchOutcomeUnknown": 1.0},
		valuesOf(recs, metrics.LaunchFailures, metrics.DimNodePool, metrics.DimReason))

	quiet := provisionerRecords(t, provisioning.Outcome{Report: provisioning.Report{Lease: true, LaunchFailures: []provisioning.LaunchFailure{
		{NodePool: "default", Reason: "InsufficientCapacity"}}}})
	assert.NotContains(t, names(quiet), metrics.LaunchesNeverSucceed, "a counter that counted nothing is not written")
}

func TestCapacityMetrics(t *testing.T) {
	c := provisioning.Capacity{
		Pools: []provisioning.PoolCapacity{{NodePool: "default", Nodes: 2,
			Allocatable:    scheduling.Resources{CPU: 7_800, Memory: 30 << 30},
			Overhead:       scheduling.Resources{CPU: 200, Memory: 2 << 30},
			PodRequests:    scheduling.Resources{CPU: 3_900, Memory: 6 << 30},
			DaemonRequests: scheduling.Resources{CPU: 400, Memory: 1 << 30},
			Pods:           map[corev1.PodPhase]int{corev1.PodRunning: 12, corev1.PodPending: 1}}},
		Startup: []time.Duration{20 * time.Second, 45 * time.Second},
	}
	recs := provisionerRecords(t, provisioning.Outcome{Report: provisioning.Report{Lease: true}, Capacity: &c})
	byType := func(name string) map[string]any {
		return valuesOf(recs, name, metrics.DimNodePool, metrics.DimResourceType)
	}
	assert.EqualValues(t, map[string]any{"default/cpu": 7.8, "default/memory": float64(30 << 30)}, byType(metrics.NodesAllocatable))
	assert.EqualValues(t, map[string]any{"default/cpu": 0.2, "default/memory": float64(2 << 30)}, byType(metrics.NodesSystemOverhead))
	assert.EqualValues(t, map[string]any{"default/cpu": 3.9, "default/memory": float64(6 << 30)}, byType(metrics.NodesPodRequests))
	assert.EqualValues(t, map[string]any{"default/cpu": 0.4, "default/memory": float64(1 << 30)}, byType(metrics.NodesDaemonRequests))
	assert.EqualValues(t, map[string]any{"default/Running": 12.0, "default/Pending": 1.0}, valuesOf(recs, metrics.PodsState, metrics.DimNodePool, metrics.DimPhase))
	assert.EqualValues(t, map[string]any{"cpu": 50.0, "memory": 20.0}, valuesOf(recs, metrics.ClusterUtilization, metrics.DimResourceType))
	assert.EqualValues(t, map[string]any{"": []any{20.0, 45.0}}, valuesOf(recs, metrics.PodsStartupDuration), "one datapoint per pod")

	none := provisionerRecords(t, provisioning.Outcome{Report: provisioning.Report{Lease: true}, Capacity: &provisioning.Capacity{}})
	require.NotEmpty(t, none)
	assert.NotContains(t, names(none), metrics.ClusterUtilization, "no Nodewright Nodes, no utilization to report")
}
