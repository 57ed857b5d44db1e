package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/consolidation"
	"github.com/nodewright/nodewright/shared/metrics"
)

// writeRunMetrics writes what a disruption run did as EMF records named after Karpenter's disruption
// metrics (without the karpenter_ prefix):
//   - voluntary_disruption_decisions_total per command (dimensions ClusterName, Decision delete|replace,
//     Reason Empty|Drifted|Underutilized|Expired|Manual|Unhealthy, ConsolidationType empty|drift|multi|single|forceful);
//   - voluntary_disruption_decision_evaluation_duration_seconds, voluntary_disruption_failed_validations_total
//     and voluntary_disruption_queue_failures_total (commands rolled back), dimension ClusterName;
//   - voluntary_disruption_eligible_nodes per NodePool (dimensions ClusterName, NodePool);
//   - nodepools_allowed_disruptions per NodePool and reason (dimensions ClusterName, NodePool, Reason);
//   - nodeclaims_disrupted_total per NodePool and reason (claims handed to termination);
//   - nodeclaims_drifted per NodePool and drift type (Type: AMIDrift, NodePoolDrifted...) and
//     nodeclaims_expired per NodePool: the drifted and expired nodes the run's first read found (gauges);
//   - voluntary_disruption_budget_blocked_nodepools, dimension ClusterName: the NodePools whose budgets
//     allowed no disruption at all while they had candidates (Nodewright's own; the alarm on a budget
//     that blocks consolidation for hours reads it). Written only by runs that decided.
func writeRunMetrics(w io.Writer, cluster string, rep consolidation.Report, at time.Time) error {
	cl := map[string]string{"ClusterName": cluster}
	if err := metrics.Write(w, metrics.Record{Dimensions: cl, Values: map[string]float64{
		"voluntary_disruption_decision_evaluation_duration_seconds": rep.Evaluation.Seconds(),
		"voluntary_disruption_failed_validations_total":             float64(rep.FailedValidations),
		"voluntary_disruption_queue_failures_total":                 float64(rep.RolledBack),
	}, Units: map[string]string{"voluntary_disruption_decision_evaluation_duration_seconds": "Seconds"}}, at); err != nil {
		return err
	}
	if rep.EligibleNodes != nil {
		if err := metrics.Write(w, metrics.Record{Dimensions: cl, Values: map[string]float64{
			"voluntary_disruption_budget_blocked_nodepools": float64(budgetBlockedPools(rep)),
		}}, at); err != nil {
			return err
		}
	}
	decisions := map[[3]string]int{}
	for _, c := range rep.Commands {
		decisions[[3]string{string(c.Action), string(c.Reason), string(c.Method)}]++
	}
	for k, n := range decisions {
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "Decision": k[0],
			"Reason": k[1], "ConsolidationType": k[2]}, Values: map[string]float64{"voluntary_disruption_decisions_total": float64(n)}}, at); err != nil {
			return err
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(rep.EligibleNodes)) {
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "NodePool": pool},
			Values: map[string]float64{"voluntary_disruption_eligible_nodes": float64(rep.EligibleNodes[pool])}}, at); err != nil {
			return fmt.Errorf("nodepool %s: %w", pool, err)
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(rep.Allowed)) {
		for reason, n := range rep.Allowed[pool] {
			if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "NodePool": pool, "Reason": string(reason)},
				Values: map[string]float64{"nodepools_allowed_disruptions": float64(n)}}, at); err != nil {
				return fmt.Errorf("nodepool %s: %w", pool, err)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(rep.Drifted)) {
		pool, reason, _ := strings.Cut(key, "/")
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "NodePool": pool, "Type": reason},
			Values: map[string]float64{"nodeclaims_drifted": float64(rep.Drifted[key])}}, at); err != nil {
			return fmt.Errorf("nodepool %s: %w", pool, err)
		}
	}
	for _, pool := range slices.Sorted(maps.Keys(rep.Expired)) {
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "NodePool": pool},
			Values: map[string]float64{"nodeclaims_expired": float64(rep.Expired[pool])}}, at); err != nil {
			return fmt.Errorf("nodepool %s: %w", pool, err)
		}
	}
	for key, n := range rep.HandedOver {
		pool, reason, _ := strings.Cut(key, "/")
		if err := metrics.Write(w, metrics.Record{Dimensions: map[string]string{"ClusterName": cluster, "NodePool": pool, "Reason": metrics.OrUnknown(reason)},
			Values: map[string]float64{"nodeclaims_disrupted_total": float64(n)}}, at); err != nil {
			return fmt.Errorf("nodepool %s: %w", pool, err)
		}
	}
	return nil
}

// budgetBlockedPools counts the NodePools with candidates that only their budgets kept, while those
// budgets allowed no disruption for any reason: consolidation of the pool is at a standstill. A pool
// that is still disrupting within its budget (some candidates held back, some allowed) is not counted.
func budgetBlockedPools(rep consolidation.Report) int {
	n := 0
	for pool, blocked := range rep.BudgetBlocked {
		if blocked == 0 {
			continue
		}
		standstill := true
		for _, allowed := range rep.Allowed[pool] {
			standstill = standstill && allowed == 0
		}
		if standstill {
			n++
		}
	}
	return n
}
