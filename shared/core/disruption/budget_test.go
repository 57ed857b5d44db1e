package disruption_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestAllowedDisruptions(t *testing.T) {
	b := func(nodes string) disruption.Budget { return disruption.Budget{Nodes: nodes} }
	scheduled := func(nodes, schedule string, d time.Duration, reasons ...disruption.Reason) disruption.Budget {
		return disruption.Budget{Nodes: nodes, Schedule: schedule, Duration: d, Reasons: reasons}
	}
	cases := []struct {
		name       string
		budgets    []disruption.Budget
		reason     disruption.Reason
		at         time.Time
		nodes      int
		disrupting int
		want       int
	}{
		{name: "count", budgets: []disruption.Budget{b("3")}, nodes: 10, want: 3},
		{name: "percent rounds up", budgets: []disruption.Budget{b("10%")}, nodes: 15, want: 2},
		{name: "percent of one node rounds up to one", budgets: []disruption.Budget{b("10%")}, nodes: 1, want: 1},
		{name: "percent exact", budgets: []disruption.Budget{b("50%")}, nodes: 10, want: 5},
		{name: "0% allows none", budgets: []disruption.Budget{b("0%")}, nodes: 10, want: 0},
		{name: "100%", budgets: []disruption.Budget{b("100%")}, nodes: 7, want: 7},
		{name: "default budget is 10%", budgets: nil, nodes: 25, want: 3},
		{name: "an explicit empty list has no limit", budgets: []disruption.Budget{}, nodes: 25, want: math.MaxInt32},
		{name: "minimum of active budgets", budgets: []disruption.Budget{b("5"), b("20%")}, nodes: 10, want: 2},
		{name: "disrupting nodes are subtracted", budgets: []disruption.Budget{b("3")}, nodes: 10, disrupting: 2, want: 1},
		{name: "floored at zero", budgets: []disruption.Budget{b("3")}, nodes: 10, disrupting: 5, want: 0},
		{name: "malformed count allows none", budgets: []disruption.Budget{b("five"), b("10")}, nodes: 10, want: 0},
		{name: "percent over 100 is malformed", budgets: []disruption.Budget{b("150%")}, nodes: 10, want: 0},
		{name: "negative is malformed", budgets: []disruption.Budget{b("-1")}, nodes: 10, want: 0},
		{name: "fractional percent is malformed", budgets: []disruption.Budget{b("10.5%")}, nodes: 10, want: 0},
		{name: "unreadable schedule allows none", budgets: []disruption.Budget{scheduled("5", "not a cron", time.Hour)}, nodes: 10, want: 0},
		{name: "duration without schedule allows none", budgets: []disruption.Budget{{Nodes: "5", Duration: time.Hour}}, nodes: 10, want: 0},
		{
			name:    "schedule active: hit at 09:00 UTC, 8h window, now 12:00",
			budgets: []disruption.Budget{scheduled("0", "0 9 * * *", 8*time.Hour), b("4")}, nodes: 10, want: 0,
		},
		{
			name:    "schedule inactive outside its window: the budget does not limit",
			budgets: []disruption.Budget{scheduled("0", "0 9 * * *", 2*time.Hour), b("4")}, nodes: 10, want: 4,
		},
		{
			name:    "only inactive budgets: no limit",
			budgets: []disruption.Budget{scheduled("0", "0 9 * * *", 2*time.Hour)}, nodes: 10, want: math.MaxInt32,
		},
		{
			name:    "a hit exactly duration before now is over",
			budgets: []disruption.Budget{scheduled("0", "0 4 * * *", 8*time.Hour), b("4")}, nodes: 10, want: 4,
		},
		{
			name:    "schedules are read in UTC: 12:00 hit active at 12:30 UTC",
			budgets: []disruption.Budget{scheduled("1", "0 12 * * *", time.Hour)}, at: now.Add(30 * time.Minute), nodes: 10, want: 1,
		},
		{
			name:    "weekday schedule: Mondays only, now is a Monday",
			budgets: []disruption.Budget{scheduled("0", "0 0 * * mon", 24*time.Hour), b("4")}, nodes: 10, want: 0,
		},
		{
			name:    "weekday schedule: Sundays only, now is a Monday noon",
			budgets: []disruption.Budget{scheduled("0", "0 0 * * sun", 24*time.Hour), b("4")}, nodes: 10, want: 4,
		},
		{
			name:    "reasons: a Drifted-only budget does not limit Empty",
			budgets: []disruption.Budget{{Nodes: "0", Reasons: []disruption.Reason{disruption.ReasonDrifted}}, b("5")}, reason: disruption.ReasonEmpty, nodes: 10, want: 5,
		},
		{
			name:    "reasons: a Drifted-only budget limits Drifted",
			budgets: []disruption.Budget{{Nodes: "0", Reasons: []disruption.Reason{disruption.ReasonDrifted}}, b("5")}, reason: disruption.ReasonDrifted, nodes: 10, want: 0,
		},
		{
			name:    "reasons: a budget listing several reasons applies to each",
			budgets: []disruption.Budget{{Nodes: "1", Reasons: []disruption.Reason{disruption.ReasonEmpty, disruption.ReasonUnderutilized}}},
			reason:  disruption.ReasonUnderutilized, nodes: 10, want: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			if at.IsZero() {
				at = now
			}
			reason := tc.reason
			if reason == "" {
				reason = disruption.ReasonUnderutilized
			}
			p := pool("default", budgets(tc.budgets...))
			if tc.budgets == nil {
				p.Budgets = nil
			}
			got := disruption.AllowedDisruptions(p, reason, at, tc.nodes, tc.disrupting)
			want := tc.want
			if want == math.MaxInt32 {
				want -= tc.disrupting
			}
			assert.Equal(t, want, got)
		})
	}
}

func TestBudgetsInDecide(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	empties := func(n int) []disruption.Node {
		var out []disruption.Node
		for i := range n {
			out = append(out, node(small, nodeSpec{string(rune('a' + i)), "default", "medium", od, nil}))
		}
		return out
	}
	t.Run("default 10% of 5 nodes deletes one empty node", func(t *testing.T) {
		res := disruption.Decide(disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default")}, Nodes: empties(5)})
		require.Len(t, res.Commands, 1)
		assert.Len(t, res.Commands[0].Nodes, 1)
		blocked := 0
		for _, k := range res.Kept {
			if assert.Contains(t, k.Reason, "budget for Empty") {
				assert.True(t, k.BudgetBlocked, "kept by the budget alone: %s", k.Node)
				blocked++
			}
		}
		assert.Equal(t, 4, blocked)
	})
	t.Run("a node already disrupting uses the budget up", func(t *testing.T) {
		nodes := empties(5)
		busy := node(small, nodeSpec{"z", "default", "medium", od, []*corev1.Pod{pod("web", "1")}})
		busy.Node.Spec.Taints = []corev1.Taint{{Key: scheduling.TaintDisrupted, Effect: corev1.TaintEffectNoSchedule}}
		res := disruption.Decide(disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default")}, Nodes: append(nodes, busy)})
		assert.Empty(t, res.Commands)
		assert.Equal(t, "already being disrupted", keptReason(res, "z"))
	})
	t.Run("a node not Ready counts as disrupting", func(t *testing.T) {
		nodes := empties(5)
		nodes[0].Node.Status.Conditions[0].Status = corev1.ConditionFalse
		res := disruption.Decide(disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default")}, Nodes: nodes})
		assert.Empty(t, res.Commands)
	})
	t.Run("budgets are per pool", func(t *testing.T) {
		nodes := empties(2)
		nodes = append(nodes, node(small, nodeSpec{"x", "other", "medium", od, nil}))
		pools := []disruption.NodePool{pool("default", budgets(disruption.Budget{Nodes: "1"})), pool("other", budgets(disruption.Budget{Nodes: "1"}))}
		res := disruption.Decide(disruption.Input{Now: now, InstanceTypes: small, NodePools: pools, Nodes: nodes})
		require.Len(t, res.Commands, 1)
		assert.Equal(t, []string{"a", "x"}, nodeNames(res.Commands[0]))
	})
	t.Run("an Underutilized budget of 0 blocks consolidation but not emptiness", func(t *testing.T) {
		p := pool("default", budgets(disruption.Budget{Nodes: "0", Reasons: []disruption.Reason{disruption.ReasonUnderutilized}}))
		nodes := []disruption.Node{
			bigUnmanaged("sink"),
			node(small, nodeSpec{"busy", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}),
		}
		res := disruption.Decide(disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{p}, Nodes: nodes})
		assert.Empty(t, res.Commands)
		assert.Contains(t, keptReason(res, "busy"), "budget for Underutilized")
		res = disruption.Decide(disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{p}, Nodes: append(nodes, empties(1)...)})
		require.Len(t, res.Commands, 1)
		assert.Equal(t, []string{"a"}, nodeNames(res.Commands[0]))
	})
}
