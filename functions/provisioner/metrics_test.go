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
	run := provisioning.Outcome{Report: provisioning.Report{Lease: true, PendingPods: 30, InFlight: 1, SolveDuration: 14 * time.Millisecond,
		Claims:        []provisioning.LaunchedClaim{{NodePool: "default"}, {NodePool: "default"}, {NodePool: "gpu"}},
		Unschedulable: []provisioning.UnschedulablePod{{Pod: "ns/p"}}}}
	recs := records(t, run)
	require.Len(t, recs, 3, "one run record and one per NodePool that launched")
	assert.EqualValues(t, 30, recs[0]["provisioner_pending_pods"])
	assert.InDelta(t, 0.014, recs[0]["scheduler_scheduling_duration_seconds"], 1e-9)
	created := map[string]any{}
	for _, r := range recs[1:] {
		created[r["NodePool"].(string)] = r["nodeclaims_created"]
	}
	assert.EqualValues(t, map[string]any{"default": 2.0, "gpu": 1.0}, created)

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
