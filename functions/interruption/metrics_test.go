package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/interruption"
	"github.com/nodewright/nodewright/shared/metrics"
)

func records(t *testing.T, stats interruption.BatchStats) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, writeBatchMetrics(&buf, "prod", stats, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	return recs
}

// byMetric groups records by the metric they carry.
func byMetric(recs []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if _, ok := r[name]; ok {
			out = append(out, r)
		}
	}
	return out
}

func TestBatchMetrics(t *testing.T) {
	recs := records(t, interruption.BatchStats{
		Received:       map[string]int{"spot_interrupted": 2, "malformed": 1},
		Acknowledged:   2,
		Failed:         1,
		QueueDurations: []time.Duration{1500 * time.Millisecond, 2 * time.Second},
		Disrupted: []interruption.Disruption{{NodePool: "default", Reason: "SpotInterruption", CapacityType: "spot"},
			{NodePool: "default", Reason: "SpotInterruption", CapacityType: "spot"}, {NodePool: "gpu", Reason: "ScheduledChange"}},
	})
	received := map[string]any{}
	for _, r := range byMetric(recs, "interruption_received_messages") {
		received[r["MessageType"].(string)] = r["interruption_received_messages"]
		assert.Equal(t, "prod", r["ClusterName"])
	}
	assert.EqualValues(t, map[string]any{"spot_interrupted": 2.0, "malformed": 1.0}, received)

	outcome := byMetric(recs, "interruption_deleted_messages")
	require.Len(t, outcome, 1)
	assert.EqualValues(t, 2, outcome[0]["interruption_deleted_messages"])
	assert.EqualValues(t, 1, outcome[0]["interruption_failed_messages"])

	waits := byMetric(recs, "interruption_message_queue_duration_seconds")
	require.Len(t, waits, 2, "one value per message")
	assert.EqualValues(t, 1.5, waits[0]["interruption_message_queue_duration_seconds"])

	disrupted := byMetric(recs, "nodeclaims_disrupted")
	require.Len(t, disrupted, 2, "one record per NodePool, reason and capacity type")
	assert.Equal(t, "default", disrupted[0]["NodePool"])
	assert.EqualValues(t, 2, disrupted[0]["nodeclaims_disrupted"])
	assert.Equal(t, "unknown", disrupted[1]["CapacityType"], "an empty dimension is named, never left out")

	assert.Empty(t, records(t, interruption.BatchStats{}), "an empty batch says nothing")
}
