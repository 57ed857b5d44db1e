package runmetrics

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

func disruptionRecords(t *testing.T, rep disruptionrun.Report) []map[string]any {
	t.Helper()
	return emitted(t, func(w io.Writer) error { return Disruption(w, "prod", rep, time.Now()) })
}

func TestDisruptionMetrics(t *testing.T) {
	rep := disruptionrun.Report{Lease: true, Evaluation: 250 * time.Millisecond, FailedValidations: 1, RolledBack: 2,
		Commands: []disruption.Command{
			{Reason: disruption.ReasonEmpty, Method: disruption.MethodEmpty, Action: disruption.ActionDelete},
			{Reason: disruption.ReasonUnderutilized, Method: disruption.MethodMulti, Action: disruption.ActionReplace},
		},
		EligibleNodes: map[string]int{"default": 7},
		Allowed:       map[string]map[disruption.Reason]int{"default": {disruption.ReasonEmpty: 3, disruption.ReasonUnderutilized: 1}},
		HandedOver:    map[string]int{"default/Empty": 2},
		Drifted:       map[string]int{"default/AMIDrift": 3},
		Expired:       map[string]int{"default": 2},
	}
	recs := disruptionRecords(t, rep)
	assert.InDelta(t, 0.25, valuesOf(recs, metrics.DisruptionEvaluation)[""], 1e-9)
	assert.EqualValues(t, map[string]any{"": 1.0}, valuesOf(recs, metrics.DisruptionFailedValidations))
	assert.EqualValues(t, map[string]any{"": 2.0}, valuesOf(recs, metrics.DisruptionQueueFailures))
	assert.EqualValues(t, map[string]any{"delete/Empty/empty": 1.0, "replace/Underutilized/multi": 1.0},
		valuesOf(recs, metrics.DisruptionDecisions, metrics.DimDecision, metrics.DimReason, metrics.DimConsolidationType))
	assert.EqualValues(t, map[string]any{"default": 7.0}, valuesOf(recs, metrics.DisruptionEligibleNodes, metrics.DimNodePool))
	assert.EqualValues(t, map[string]any{"default/Empty": 3.0, "default/Underutilized": 1.0},
		valuesOf(recs, metrics.AllowedDisruptions, metrics.DimNodePool, metrics.DimReason))
	assert.EqualValues(t, map[string]any{"default/Empty": 2.0}, valuesOf(recs, metrics.ClaimsDisrupted, metrics.DimNodePool, metrics.DimReason))
	assert.EqualValues(t, map[string]any{"default/AMIDrift": 3.0}, valuesOf(recs, metrics.ClaimsDrifted, metrics.DimNodePool, metrics.DimType))
	assert.EqualValues(t, map[string]any{"default": 2.0}, valuesOf(recs, metrics.ClaimsExpired, metrics.DimNodePool))
	assert.EqualValues(t, map[string]any{"": 0.0}, valuesOf(recs, metrics.BudgetBlockedPools))
}

func TestRunsThatDecidedNothingWriteNoBudgetSignal(t *testing.T) {
	recs := disruptionRecords(t, disruptionrun.Report{Lease: true, Skipped: "incomplete"})
	assert.Empty(t, recs, "no evidence either way, and no counter counted anything")
}

func TestBudgetBlockedPools(t *testing.T) {
	zero := map[disruption.Reason]int{disruption.ReasonEmpty: 0, disruption.ReasonUnderutilized: 0}
	cases := []struct {
		name string
		rep  disruptionrun.Report
		want int
	}{
		{name: "no candidate held back", rep: disruptionrun.Report{Allowed: map[string]map[disruption.Reason]int{"a": zero}}, want: 0},
		{name: "held back while the budget allows nothing", want: 1, rep: disruptionrun.Report{
			BudgetBlocked: map[string]int{"a": 3}, Allowed: map[string]map[disruption.Reason]int{"a": zero}}},
		{name: "held back while still disrupting within the budget", want: 0, rep: disruptionrun.Report{
			BudgetBlocked: map[string]int{"a": 3},
			Allowed:       map[string]map[disruption.Reason]int{"a": {disruption.ReasonEmpty: 0, disruption.ReasonUnderutilized: 2}}}},
		{name: "two pools, one at a standstill", want: 1, rep: disruptionrun.Report{
			BudgetBlocked: map[string]int{"a": 1, "b": 2},
			Allowed:       map[string]map[disruption.Reason]int{"a": zero, "b": {disruption.ReasonEmpty: 1}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, budgetBlockedPools(tc.rep)) })
	}
}

// TestBalancedScoreMetrics: each scored move gives consolidation_score samples per NodePool, decided by
// that pool, and one consolidation_moves_total per NodePool, decided by the move: here a move x
// rejects although y approves it, and an approved move of x alone.
func TestBalancedScoreMetrics(t *testing.T) {
	rep := disruptionrun.Report{Lease: true, Scores: []disruption.ScoredMove{
		{Method: disruption.MethodMulti, Action: disruption.ActionReplace, Nodes: []string{"a", "c"}, Score: disruption.Score{
			Score: 0.46875, Threshold: 0.5, K: 2, Pools: []disruption.PoolScore{
				{NodePool: "x", Score: 0.46875}, {NodePool: "y", Score: 0.9375, Approved: true}}}},
		{Method: disruption.MethodSingle, Action: disruption.ActionDelete, Nodes: []string{"b"}, Score: disruption.Score{
			Score: 0.5, Threshold: 0.5, K: 2, Approved: true, Pools: []disruption.PoolScore{{NodePool: "x", Score: 0.5, Approved: true}}}},
	}}
	recs := disruptionRecords(t, rep)
	dims := []string{metrics.DimDecision, metrics.DimNodePool, metrics.DimPolicy}
	assert.EqualValues(t, map[string]any{"rejected/x/Balanced": []any{0.46875}, "approved/y/Balanced": []any{0.9375}, "approved/x/Balanced": []any{0.5}},
		valuesOf(recs, metrics.ConsolidationScore, dims...))
	assert.EqualValues(t, map[string]any{"rejected/x/Balanced": 1.0, "rejected/y/Balanced": 1.0, "approved/x/Balanced": 1.0},
		valuesOf(recs, metrics.ConsolidationMoves, dims...))
}
