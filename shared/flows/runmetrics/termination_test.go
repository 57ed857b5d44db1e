package runmetrics

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

func TestTerminationMetrics(t *testing.T) {
	write := func(stats termination.BatchStats) []map[string]any {
		return emitted(t, func(w io.Writer) error { return Termination(w, "prod", stats, time.Now()) })
	}
	recs := write(termination.BatchStats{
		Drained: map[string]int{"default": 2},
		Terminated: []termination.Termination{
			{NodePool: "default", Zone: "us-east-1a", CapacityType: "spot", Took: 90 * time.Second, Node: true, Lifetime: time.Hour},
			{NodePool: "default", Zone: "us-east-1a", CapacityType: "spot", Took: 30 * time.Second, Node: true, Lifetime: 2 * time.Hour},
			{Took: time.Minute}, // a claim that never had a Node and no NodePool on record
		},
		PodsDrained: map[string]int{"SpotInterruption": 7},
		Evictions:   map[string]int{"200": 7, "429": 3},
		Redriven:    4,
	})
	assert.EqualValues(t, map[string]any{"default": 2.0}, valuesOf(recs, metrics.NodesDrained, metrics.DimNodePool))
	assert.EqualValues(t, map[string]any{"default/spot/us-east-1a": 2.0, "unknown/unknown/unknown": 1.0},
		valuesOf(recs, metrics.ClaimsTerminated, metrics.DimNodePool, metrics.DimCapacityType, metrics.DimZone),
		"every claim counts; an empty dimension is named, not dropped")
	assert.EqualValues(t, map[string]any{"default/us-east-1a": 2.0}, valuesOf(recs, metrics.NodesTerminated, metrics.DimNodePool, metrics.DimZone),
		"only claims that had a Node")
	assert.EqualValues(t, map[string]any{"default": []any{90.0, 30.0}}, valuesOf(recs, metrics.NodesTerminationDuration, metrics.DimNodePool))
	assert.EqualValues(t, map[string]any{"default": []any{3600.0, 7200.0}}, valuesOf(recs, metrics.NodesLifetime, metrics.DimNodePool))
	assert.EqualValues(t, map[string]any{"SpotInterruption": 7.0}, valuesOf(recs, metrics.PodsDrained, metrics.DimReason))
	assert.EqualValues(t, map[string]any{"200": 7.0, "429": 3.0}, valuesOf(recs, metrics.EvictionRequests, metrics.DimCode))
	assert.EqualValues(t, map[string]any{"": 4.0}, valuesOf(recs, metrics.TerminationRedriven))

	assert.Empty(t, write(termination.BatchStats{}), "a batch that did nothing says nothing")
}
