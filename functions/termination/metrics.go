package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/nodewright/nodewright/shared/metrics"
	"github.com/nodewright/nodewright/shared/termination"
)

// writeBatchMetrics writes what a batch did as EMF records named after Karpenter's termination metrics:
// nodes_drained, nodes_terminated and nodes_termination_duration_seconds by NodePool, pods_drained by
// reason, pods_eviction_requests by answer code and termination_requests_redriven (all with ClusterName).
func writeBatchMetrics(w io.Writer, cluster string, stats termination.BatchStats, at time.Time) error {
	write := func(dims map[string]string, name string, v float64, unit string) error {
		d := map[string]string{"ClusterName": cluster}
		for k, val := range dims {
			d[k] = metrics.OrUnknown(val) // a claim record without a NodePool still counts
		}
		r := metrics.Record{Dimensions: d, Values: map[string]float64{name: v}}
		if unit != "" {
			r.Units = map[string]string{name: unit}
		}
		if err := metrics.Write(w, r, at); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	for _, pool := range slices.Sorted(maps.Keys(stats.Drained)) {
		if err := write(map[string]string{"NodePool": pool}, "nodes_drained", float64(stats.Drained[pool]), ""); err != nil {
			return err
		}
	}
	terminated := map[string]int{}
	for _, t := range stats.Terminated {
		terminated[t.NodePool]++
		if err := write(map[string]string{"NodePool": t.NodePool}, "nodes_termination_duration_seconds", t.Took.Seconds(), "Seconds"); err != nil {
			return err
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(terminated)) {
		if err := write(map[string]string{"NodePool": pool}, "nodes_terminated", float64(terminated[pool]), ""); err != nil {
			return err
		}
	}
	for _, reason := range slices.Sorted(maps.Keys(stats.PodsDrained)) {
		if err := write(map[string]string{"Reason": reason}, "pods_drained", float64(stats.PodsDrained[reason]), ""); err != nil {
			return err
		}
	}
	for _, code := range slices.Sorted(maps.Keys(stats.Evictions)) {
		if err := write(map[string]string{"Code": code}, "pods_eviction_requests", float64(stats.Evictions[code]), ""); err != nil {
			return err
		}
	}
	if stats.Redriven > 0 {
		return write(nil, "termination_requests_redriven", float64(stats.Redriven), "")
	}
	return nil
}
