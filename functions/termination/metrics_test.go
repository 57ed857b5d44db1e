package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/metrics"
	"github.com/nodewright/nodewright/shared/termination"
)

func records(t *testing.T, stats termination.BatchStats) map[string][]map[string]any {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, writeBatchMetrics(&buf, "prod", stats, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	out := map[string][]map[string]any{}
	for _, r := range recs {
		assert.Equal(t, "prod", r["ClusterName"])
		name := metrics.MetricNames(r)[0]
		out[name] = append(out[name], r)
	}
	return out
}

func TestBatchMetrics(t *testing.T) {
	recs := records(t, termination.BatchStats{
		Drained:     map[string]int{"default": 2},
		Terminated:  []termination.Termination{{NodePool: "default", Took: 90 * time.Second}, {NodePool: "", Took: time.Minute}},
		PodsDrained: map[string]int{"SpotInterruption": 7},
		Evictions:   map[string]int{"200": 7, "429": 3},
		Redriven:    4,
	})
	require.Len(t, recs["nodes_drained"], 1)
	assert.EqualValues(t, 2, recs["nodes_drained"][0]["nodes_drained"])
	assert.Equal(t, "default", recs["nodes_drained"][0]["NodePool"])

	require.Len(t, recs["nodes_termination_duration_seconds"], 2, "one value per terminated node")
	assert.EqualValues(t, 90, recs["nodes_termination_duration_seconds"][0]["nodes_termination_duration_seconds"])
	terminated := map[string]any{}
	for _, r := range recs["nodes_terminated"] {
		terminated[r["NodePool"].(string)] = r["nodes_terminated"]
	}
	assert.EqualValues(t, map[string]any{"default": 1.0, "unknown": 1.0}, terminated, "an empty NodePool is named, not dropped")

	require.Len(t, recs["pods_drained"], 1)
	assert.Equal(t, "SpotInterruption", recs["pods_drained"][0]["Reason"])
	codes := map[string]any{}
	for _, r := range recs["pods_eviction_requests"] {
		codes[r["Code"].(string)] = r["pods_eviction_requests"]
	}
	assert.EqualValues(t, map[string]any{"200": 7.0, "429": 3.0}, codes)
	require.Len(t, recs["termination_requests_redriven"], 1)
	assert.EqualValues(t, 4, recs["termination_requests_redriven"][0]["termination_requests_redriven"])

	assert.Empty(t, records(t, termination.BatchStats{}), "a batch that did nothing says nothing")
}
