package runmetrics

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/flows/interruption"
)

func TestInterruptionMetrics(t *testing.T) {
	write := func(stats interruption.BatchStats) []map[string]any {
		return emitted(t, func(w io.Writer) error { return Interruption(w, "prod", stats, time.Now()) })
	}
	recs := write(interruption.BatchStats{
		Received:       map[string]int{"spot_interrupted": 2, "malformed": 1},
		Acknowledged:   2,
		Failed:         1,
		QueueDurations: []time.Duration{1500 * time.Millisecond, 2 * time.Second},
		Disrupted: []interruption.Disruption{{NodePool: "default", Reason: "SpotInterruption", CapacityType: "spot"},
			{NodePool: "default", Reason: "SpotInterruption", CapacityType: "spot"}, {Reason: "ScheduledChange"}},
	})
	assert.EqualValues(t, map[string]any{"spot_interrupted": 2.0, "malformed": 1.0}, valuesOf(recs, metrics.InterruptionReceived, metrics.DimMessageType))
	assert.EqualValues(t, map[string]any{"": 2.0}, valuesOf(recs, metrics.InterruptionDeleted))
	assert.EqualValues(t, map[string]any{"": 1.0}, valuesOf(recs, metrics.InterruptionFailed))
	assert.NotContains(t, names(recs), metrics.InterruptionRetried, "no retries, nothing written")
	assert.EqualValues(t, map[string]any{"": []any{1.5, 2.0}}, valuesOf(recs, metrics.InterruptionQueueDuration), "one datapoint per message")
	assert.EqualValues(t, map[string]any{"default/SpotInterruption": 2.0, "unknown/ScheduledChange": 1.0},
		valuesOf(recs, metrics.ClaimsDisrupted, metrics.DimNodePool, metrics.DimReason), "an empty dimension is named, never left out")

	assert.Empty(t, write(interruption.BatchStats{}), "an empty batch says nothing")
}
