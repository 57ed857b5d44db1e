package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/metrics"
	"github.com/nodewright/nodewright/shared/provisioning"
)

func records(t *testing.T, out provisioning.Outcome) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, writeRunMetrics(&buf, "prod", out, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	return recs
}

func TestRunMetrics(t *testing.T) {
	// Three runs: the first launched two claims, the second one, the last (the report) nothing.
	run := provisioning.Outcome{Report: provisioning.Report{Lease: true, PendingPods: 30, InFlight: 3, SolveDuration: 14 * time.Millisecond,
		Unschedulable: []provisioning.UnschedulablePod{{Pod: "ns/p"}}},
		Launched: []provisioning.LaunchedClaim{{NodePool: "default"}, {NodePool: "default"}, {NodePool: "gpu"}}, Runs: 3}
	recs := records(t, run)
	require.Len(t, recs, 3, "one record per NodePool that launched and one for the run")
	created := map[string]any{}
	var runRec map[string]any
	for _, r := range recs {
		if pool, ok := r["NodePool"].(string); ok {
			created[pool] = r["nodeclaims_created"]
		} else {
			runRec = r
		}
	}
	assert.EqualValues(t, map[string]any{"default": 2.0, "gpu": 1.0}, created, "every run's launches count, not only the last run's")
	require.NotNil(t, runRec)
	assert.EqualValues(t, 30, runRec["provisioner_pending_pods"])
	assert.InDelta(t, 0.014, runRec["scheduler_scheduling_duration_seconds"], 1e-9)

	coalesced := records(t, provisioning.Outcome{Coalesced: true, Trigger: provisioning.Trigger{Messages: 10}})
	require.Len(t, coalesced, 1)
	assert.EqualValues(t, 10, coalesced[0]["provisioner_coalesced_triggers"])

	assert.Empty(t, records(t, provisioning.Outcome{Report: provisioning.Report{Lease: false}}), "another run held the lease: nothing to say")
}

func TestLaunchFailureMetrics(t *testing.T) {
	run := provisioning.Outcome{Report: provisioning.Report{Lease: true, LaunchFailures: []provisioning.LaunchFailure{
		{NodePool: "default", Reason: "Unauthorized"}, {NodePool: "default", Reason: "Unauthorized"},
		{NodePool: "default", Reason: "InsufficientCapacity"}, {NodePool: "gpu", Reason: "LaunchOutcomeUnknown", Pending: true},
	}}}
	recs := records(t, run)
	require.Len(t, recs, 4, "one run record and one per NodePool and reason")
	assert.EqualValues(t, 2, recs[0]["provisioner_launches_never_succeed"], "only the unauthorized ones")
	failed := map[string]any{}
	for _, r := range recs[1:] {
		failed[r["NodePool"].(string)+"/"+r["Reason"].(string)] = r["nodeclaims_launch_failed"]
	}
	assert.EqualValues(t, map[string]any{"default/Unauthorized": 2.0, "default/InsufficientCapacity": 1.0, "gpu/LaunchOutcomeUnknown": 1.0}, failed)
}
