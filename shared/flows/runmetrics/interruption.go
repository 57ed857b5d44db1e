package runmetrics

import (
	"cmp"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/flows/interruption"
)

// Interruption writes what an interruption batch did, after Karpenter's interruption metrics:
// interruption_received_messages_total per message_type; interruption_deleted_messages_total and
// Nodewright's interruption_failed_messages_total (left for redelivery) and
// interruption_retried_messages_total (tries after the first inside the invocation) when they counted
// something; interruption_message_queue_duration_seconds, one datapoint per message; and
// nodeclaims_disrupted_total per nodepool and reason, the same metric the disruption function writes.
func Interruption(w io.Writer, cluster string, stats interruption.BatchStats, at time.Time) error {
	e := newEmitter(w, cluster, at)
	for _, t := range slices.Sorted(maps.Keys(stats.Received)) {
		e.one(metrics.InterruptionReceived, float64(stats.Received[t]), metrics.DimMessageType, t)
	}
	counts := map[string]float64{}
	for name, n := range map[string]int{metrics.InterruptionDeleted: stats.Acknowledged,
		metrics.InterruptionFailed: stats.Failed, metrics.InterruptionRetried: stats.Retries} {
		if n > 0 {
			counts[name] = float64(n)
		}
	}
	e.values(counts)
	e.samples(metrics.InterruptionQueueDuration, seconds(stats.QueueDurations))
	type key struct{ pool, reason string }
	disrupted := map[key]int{}
	for _, d := range stats.Disrupted {
		disrupted[key{d.NodePool, d.Reason}]++
	}
	keys := slices.SortedFunc(maps.Keys(disrupted), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.pool, b.pool), cmp.Compare(a.reason, b.reason))
	})
	for _, k := range keys {
		e.one(metrics.ClaimsDisrupted, float64(disrupted[k]), metrics.DimNodePool, k.pool, metrics.DimReason, k.reason)
	}
	return e.err
}
