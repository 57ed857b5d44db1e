package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/nodewright/nodewright/shared/interruption"
	"github.com/nodewright/nodewright/shared/metrics"
)

// writeBatchMetrics writes what a batch did as EMF records named after Karpenter's interruption metrics:
// messages received by type, acknowledged (deleted), left for redelivery and the tries after the first
// inside the invocation (interruption_retried_messages, Nodewright's own), the time each waited in the
// queue (dimension ClusterName), and nodeclaims_disrupted by NodePool, reason and capacity type.
func writeBatchMetrics(w io.Writer, cluster string, stats interruption.BatchStats, at time.Time) error {
	types := slices.Sorted(maps.Keys(stats.Received))
	for _, t := range types {
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "MessageType": t},
			Values: map[string]float64{"interruption_received_messages": float64(stats.Received[t])}}, at); err != nil {
			return fmt.Errorf("message type %s: %w", t, err)
		}
	}
	cl := map[string]string{"ClusterName": cluster}
	if len(types) > 0 {
		if err := metrics.Write(w, metrics.Record{Dimensions: cl, Values: map[string]float64{
			"interruption_deleted_messages": float64(stats.Acknowledged),
			"interruption_failed_messages":  float64(stats.Failed),
			"interruption_retried_messages": float64(stats.Retries),
		}}, at); err != nil {
			return err
		}
	}
	for _, d := range stats.QueueDurations {
		if err := metrics.Write(w, metrics.Record{Dimensions: cl,
			Values: map[string]float64{"interruption_message_queue_duration_seconds": d.Seconds()},
			Units:  map[string]string{"interruption_message_queue_duration_seconds": "Seconds"}}, at); err != nil {
			return err
		}
	}
	counts := map[interruption.Disruption]int{}
	for _, d := range stats.Disrupted {
		counts[d]++
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b interruption.Disruption) int {
		return cmp.Or(cmp.Compare(a.NodePool, b.NodePool), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.CapacityType, b.CapacityType))
	})
	for _, d := range keys {
		dims := map[string]string{"ClusterName": cluster, "NodePool": metrics.OrUnknown(d.NodePool), "Reason": metrics.OrUnknown(d.Reason),
			"CapacityType": metrics.OrUnknown(d.CapacityType)}
		if err := metrics.Write(w, metrics.Record{Dimensions: dims,
			Values: map[string]float64{"nodeclaims_disrupted": float64(counts[d])}}, at); err != nil {
			return err
		}
	}
	return nil
}
