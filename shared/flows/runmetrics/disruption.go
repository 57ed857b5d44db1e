package runmetrics

import (
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

// Disruption writes what a disruption run did, after Karpenter's disruption metrics:
//   - voluntary_disruption_decisions_total per decision (delete|replace), reason (Empty, Drifted,
//     Underutilized, Expired, Manual, Unhealthy) and consolidation_type (empty, drift, multi, single, forceful);
//   - voluntary_disruption_failed_validations_total and voluntary_disruption_queue_failures_total
//     (commands rolled back) when they counted something;
//   - nodeclaims_disrupted_total per nodepool and reason: the claims handed to the termination flow;
//   - nodeclaims_drifted per nodepool and drift type and nodeclaims_expired per nodepool, the drifted
//     and expired nodes the run's first read found (Nodewright's own gauges);
//   - and, by runs that decided: voluntary_disruption_decision_evaluation_duration_seconds,
//     voluntary_disruption_eligible_nodes per nodepool with candidates, nodepools_allowed_disruptions per
//     nodepool and reason, and voluntary_disruption_budget_blocked_nodepools, the NodePools whose budgets
//     allowed no disruption at all while they had candidates (Nodewright's own; an alarm reads it);
//   - consolidation_score, the Balanced policy's score of each move per nodepool (decision: whether
//     that pool approved it), and consolidation_moves_total, the moves it scored per nodepool
//     (decision: whether the move was approved), both with policy Balanced (Report.Scores).
func Disruption(w io.Writer, cluster string, rep disruptionrun.Report, at time.Time) error {
	e := newEmitter(w, cluster, at)
	if rep.FailedValidations > 0 {
		e.one(metrics.DisruptionFailedValidations, float64(rep.FailedValidations))
	}
	if rep.RolledBack > 0 {
		e.one(metrics.DisruptionQueueFailures, float64(rep.RolledBack))
	}
	if rep.EligibleNodes != nil {
		e.values(map[string]float64{
			metrics.DisruptionEvaluation: rep.Evaluation.Seconds(),
			metrics.BudgetBlockedPools:   float64(budgetBlockedPools(rep)),
		})
	}
	decisions := map[[3]string]int{}
	for _, c := range rep.Commands {
		decisions[[3]string{string(c.Action), string(c.Reason), string(c.Method)}]++
	}
	for _, k := range slices.SortedFunc(maps.Keys(decisions), compareKeys) {
		e.one(metrics.DisruptionDecisions, float64(decisions[k]), metrics.DimDecision, k[0], metrics.DimReason, k[1],
			metrics.DimConsolidationType, k[2])
	}
	for _, pool := range slices.Sorted(maps.Keys(rep.EligibleNodes)) {
		e.one(metrics.DisruptionEligibleNodes, float64(rep.EligibleNodes[pool]), metrics.DimNodePool, pool)
	}
	for _, pool := range slices.Sorted(maps.Keys(rep.Allowed)) {
		for _, reason := range slices.Sorted(maps.Keys(rep.Allowed[pool])) {
			e.one(metrics.AllowedDisruptions, float64(rep.Allowed[pool][reason]), metrics.DimNodePool, pool, metrics.DimReason, string(reason))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(rep.Drifted)) {
		pool, kind, _ := strings.Cut(key, "/")
		e.one(metrics.ClaimsDrifted, float64(rep.Drifted[key]), metrics.DimNodePool, pool, metrics.DimType, kind)
	}
	for _, pool := range slices.Sorted(maps.Keys(rep.Expired)) {
		e.one(metrics.ClaimsExpired, float64(rep.Expired[pool]), metrics.DimNodePool, pool)
	}
	balancedScores(e, rep.Scores)
	for _, key := range slices.Sorted(maps.Keys(rep.HandedOver)) {
		pool, reason, _ := strings.Cut(key, "/")
		e.one(metrics.ClaimsDisrupted, float64(rep.HandedOver[key]), metrics.DimNodePool, pool, metrics.DimReason, reason)
	}
	return e.err
}

// maxScore keeps a score CloudWatch can store: a move that disrupts nothing of its pool scores
// math.MaxFloat64 (it cannot happen, a node counts 1), which CloudWatch refuses.
const maxScore = 1e9

// balancedScores writes consolidation_score samples and consolidation_moves_total counts.
func balancedScores(e *emitter, moves []disruption.ScoredMove) {
	scores := map[[3]string][]float64{}
	counts := map[[3]string]int{}
	for _, m := range moves {
		for _, p := range m.Score.Pools {
			scores[[3]string{decision(p.Approved), p.NodePool, string(disruption.Balanced)}] = append(
				scores[[3]string{decision(p.Approved), p.NodePool, string(disruption.Balanced)}], min(p.Score, maxScore))
			counts[[3]string{decision(m.Score.Approved), p.NodePool, string(disruption.Balanced)}]++
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(scores), compareKeys) {
		e.samples(metrics.ConsolidationScore, scores[k], metrics.DimDecision, k[0], metrics.DimNodePool, k[1], metrics.DimPolicy, k[2])
	}
	for _, k := range slices.SortedFunc(maps.Keys(counts), compareKeys) {
		e.one(metrics.ConsolidationMoves, float64(counts[k]), metrics.DimDecision, k[0], metrics.DimNodePool, k[1], metrics.DimPolicy, k[2])
	}
}

func decision(approved bool) string {
	if approved {
		return "approved"
	}
	return "rejected"
}

func compareKeys(a, b [3]string) int { return slices.Compare(a[:], b[:]) }

// budgetBlockedPools counts the NodePools with candidates that only their budgets kept, while those
// budgets allowed no disruption for any reason: consolidation of the pool is at a standstill. A pool
// that is still disrupting within its budget (some candidates held back, some allowed) is not counted.
func budgetBlockedPools(rep disruptionrun.Report) int {
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
