package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/nodewright/nodewright/shared/metrics"
	"github.com/nodewright/nodewright/shared/provisioning"
)

// writeRunMetrics writes what a provisioning run did as EMF records named after Karpenter's metrics:
// scheduling duration and the pods it saw (dimension ClusterName), and nodeclaims_created per NodePool
// (dimensions ClusterName, NodePool). A coalesced trigger counts under provisioner_coalesced_triggers.
// Failed launches count under nodeclaims_launch_failed per NodePool and Reason (the LaunchFailed
// decision's reason), and those no retry can fix (unauthorized, invalid) under
// provisioner_launches_never_succeed, which an alarm watches.
func writeRunMetrics(w io.Writer, cluster string, out provisioning.Outcome, at time.Time) error {
	cl := map[string]string{"ClusterName": cluster}
	if out.Coalesced {
		return metrics.Write(w, metrics.Record{Dimensions: cl, Values: map[string]float64{
			"provisioner_coalesced_triggers": float64(out.Trigger.Messages)}}, at)
	}
	rep := out.Report
	// Every run of the invocation launched what it launched, whatever the last one found (Handle runs
	// again after a run that launched; that last run usually launches nothing).
	created := map[string]int{}
	for _, c := range out.Launched {
		created[c.NodePool]++
	}
	for _, pool := range slices.Sorted(maps.Keys(created)) {
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "NodePool": pool},
			Values: map[string]float64{"nodeclaims_created": float64(created[pool])}}, at); err != nil {
			return fmt.Errorf("nodepool %s: %w", pool, err)
		}
	}
	if out.Err != nil || !rep.Lease {
		return nil
	}
	never := 0
	for _, f := range rep.LaunchFailures {
		if f.NeverSucceeds() {
			never++
		}
	}
	if err := metrics.Write(w, metrics.Record{Dimensions: cl, Values: map[string]float64{
		"scheduler_scheduling_duration_seconds": rep.SolveDuration.Seconds(),
		"provisioner_pending_pods":              float64(rep.PendingPods),
		"provisioner_unschedulable_pods":        float64(len(rep.Unschedulable)),
		"provisioner_inflight_nodeclaims":       float64(rep.InFlight),
		"provisioner_launches_never_succeed":    float64(never),
	}, Units: map[string]string{"scheduler_scheduling_duration_seconds": "Seconds"}}, at); err != nil {
		return err
	}
	return writeLaunchFailures(w, cluster, rep.LaunchFailures, at)
}

// writeLaunchFailures writes nodeclaims_launch_failed per NodePool and reason.
func writeLaunchFailures(w io.Writer, cluster string, failures []provisioning.LaunchFailure, at time.Time) error {
	type key struct{ pool, reason string }
	counts := map[key]int{}
	var order []key
	for _, f := range failures {
		k := key{f.NodePool, f.Reason}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "NodePool": k.pool, "Reason": k.reason},
			Values: map[string]float64{"nodeclaims_launch_failed": float64(counts[k])}}, at); err != nil {
			return fmt.Errorf("nodepool %s: %w", k.pool, err)
		}
	}
	return nil
}
