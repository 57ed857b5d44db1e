package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/consolidation"
	"github.com/nodewright/nodewright/shared/disruption"
	"github.com/nodewright/nodewright/shared/metrics"
)

func TestRunMetricsAreNamedAfterKarpenters(t *testing.T) {
	rep := consolidation.Report{Lease: true, Evaluation: 250 * time.Millisecond, FailedValidations: 1, RolledBack: 2,
		Commands: []disruption.Command{
			{Reason: disruption.ReasonEmpty, Method: disruption.MethodEmpty, Action: disruption.ActionDelete},
			{Reason: disruption.ReasonUnderutilized, Method: disruption.MethodMulti, Action: disruption.ActionReplace},
		},
		EligibleNodes: map[string]int{"default": 7},
		Allowed:       map[string]map[disruption.Reason]int{"default": {disruption.ReasonEmpty: 3, disruption.ReasonUnderutilized: 1}},
		HandedOver:    map[string]int{"default/Empty": 2},
	}
	var buf bytes.Buffer
	require.NoError(t, writeRunMetrics(&buf, "prod", rep, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	byName := map[string][]map[string]any{}
	for _, r := range recs {
		for _, n := range metrics.MetricNames(r) {
			byName[n] = append(byName[n], r)
		}
	}
	require.Len(t, byName["voluntary_disruption_decision_evaluation_duration_seconds"], 1)
	assert.InDelta(t, 0.25, byName["voluntary_disruption_decision_evaluation_duration_seconds"][0]["voluntary_disruption_decision_evaluation_duration_seconds"], 1e-9)
	assert.EqualValues(t, 1, byName["voluntary_disruption_failed_validations_total"][0]["voluntary_disruption_failed_validations_total"])
	assert.EqualValues(t, 2, byName["voluntary_disruption_queue_failures_total"][0]["voluntary_disruption_queue_failures_total"])

	decisions := byName["voluntary_disruption_decisions_total"]
	require.Len(t, decisions, 2)
	seen := map[string]bool{}
	for _, d := range decisions {
		seen[d["Decision"].(string)+"/"+d["Reason"].(string)+"/"+d["ConsolidationType"].(string)] = true
		assert.Equal(t, "prod", d["ClusterName"])
	}
	assert.Equal(t, map[string]bool{"delete/Empty/empty": true, "replace/Underutilized/multi": true}, seen)

	require.Len(t, byName["voluntary_disruption_eligible_nodes"], 1)
	assert.EqualValues(t, 7, byName["voluntary_disruption_eligible_nodes"][0]["voluntary_disruption_eligible_nodes"])
	allowed := map[string]any{}
	for _, r := range byName["nodepools_allowed_disruptions"] {
		allowed[r["NodePool"].(string)+"/"+r["Reason"].(string)] = r["nodepools_allowed_disruptions"]
	}
	assert.EqualValues(t, map[string]any{"default/Empty": 3.0, "default/Underutilized": 1.0}, allowed)
	require.Len(t, byName["nodeclaims_disrupted_total"], 1)
	assert.Equal(t, "Empty", byName["nodeclaims_disrupted_total"][0]["Reason"])
	require.Len(t, byName["voluntary_disruption_budget_blocked_nodepools"], 1)
	assert.EqualValues(t, 0, byName["voluntary_disruption_budget_blocked_nodepools"][0]["voluntary_disruption_budget_blocked_nodepools"])
}

func TestBudgetBlockedPools(t *testing.T) {
	zero := map[disruption.Reason]int{disruption.ReasonEmpty: 0, disruption.ReasonUnderutilized: 0}
	cases := []struct {
		name string
		rep  consolidation.Report
		want int
	}{
		{name: "no candidate held back", rep: consolidation.Report{Allowed: map[string]map[disruption.Reason]int{"a": zero}}, want: 0},
		{name: "held back while the budget allows nothing", want: 1, rep: consolidation.Report{
			BudgetBlocked: map[string]int{"a": 3}, Allowed: map[string]map[disruption.Reason]int{"a": zero}}},
		{name: "held back while still disrupting within the budget", want: 0, rep: consolidation.Report{
			BudgetBlocked: map[string]int{"a": 3},
			Allowed:       map[string]map[disruption.Reason]int{"a": {disruption.ReasonEmpty: 0, disruption.ReasonUnderutilized: 2}}}},
		{name: "two pools, one at a standstill", want: 1, rep: consolidation.Report{
			BudgetBlocked: map[string]int{"a": 1, "b": 2},
			Allowed:       map[string]map[disruption.Reason]int{"a": zero, "b": {disruption.ReasonEmpty: 1}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, budgetBlockedPools(tc.rep)) })
	}
}

func TestRunsThatDecidedNothingWriteNoBudgetSignal(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, writeRunMetrics(&buf, "prod", consolidation.Report{Lease: true, Skipped: "incomplete"}, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	for _, r := range recs {
		assert.NotContains(t, metrics.MetricNames(r), "voluntary_disruption_budget_blocked_nodepools", "no evidence either way")
	}
}

func TestRunMetricsCountDriftedAndExpiredNodes(t *testing.T) {
	rep := consolidation.Report{Lease: true,
		Commands: []disruption.Command{{Reason: disruption.ReasonDrifted, Method: disruption.MethodDrift, Action: disruption.ActionReplace},
			{Reason: disruption.ReasonExpired, Method: disruption.MethodForceful, Action: disruption.ActionDelete}},
		Drifted: map[string]int{"default/AMIDrift": 3, "gpu/NodePoolDrifted": 1},
		Expired: map[string]int{"default": 2},
	}
	var buf bytes.Buffer
	require.NoError(t, writeRunMetrics(&buf, "prod", rep, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	drifted, expired, decisions := map[string]any{}, map[string]any{}, map[string]bool{}
	for _, r := range recs {
		for _, n := range metrics.MetricNames(r) {
			switch n {
			case "nodeclaims_drifted":
				drifted[r["NodePool"].(string)+"/"+r["Type"].(string)] = r[n]
			case "nodeclaims_expired":
				expired[r["NodePool"].(string)] = r[n]
			case "voluntary_disruption_decisions_total":
				decisions[r["Reason"].(string)+"/"+r["ConsolidationType"].(string)] = true
			}
		}
	}
	assert.EqualValues(t, map[string]any{"default/AMIDrift": 3.0, "gpu/NodePoolDrifted": 1.0}, drifted)
	assert.EqualValues(t, map[string]any{"default": 2.0}, expired)
	assert.Equal(t, map[string]bool{"Drifted/drift": true, "Expired/forceful": true}, decisions)
}
