package main

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/nodewright/nodewright/shared/interruption"
	"github.com/nodewright/nodewright/shared/metrics"
)

// writeBatchMetrics writes what a batch did as EMF records named after Karpenter's interruption metrics:
// messages received by type, acknowledged (deleted) and left for redelivery, the time each waited in the
// queue (dimension ClusterName), and nodeclaims_disrupted by NodePool, reason and capacity type.
func writeBatchMetrics(w io.Writer, cluster string, stats interruption.BatchStats, at time.Time) error {
	types := make([]string, 0, len(stats.Received))
	for t := range stats.Received {
		types = append(types, t)
	}
	sort.Strings(types)
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
	keys := make([]interruption.Disruption, 0, len(counts))
	for d := range counts {
		keys = append(keys, d)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, d := range keys {
		dims := map[string]string{"ClusterName": cluster, "NodePool": orUnknown(d.NodePool), "Reason": orUnknown(d.Reason),
			"CapacityType": orUnknown(d.CapacityType)}
		if err := metrics.Write(w, metrics.Record{Dimensions: dims,
			Values: map[string]float64{"nodeclaims_disrupted": float64(counts[d])}}, at); err != nil {
			return err
		}
	}
	return nil
}

// orUnknown keeps a dimension from being empty (a claim that never launched has no capacity type).
func orUnknown(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}
