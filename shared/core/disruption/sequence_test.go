package disruption_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func seqNodeNames(nodes []disruption.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name()
	}
	return out
}

func keptNames(ks []disruption.Kept) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Node
	}
	return out
}

// TestSequenceBudgetSpreadsOverTicks: a budget of one node lets one empty node go per tick, so three
// empty nodes take three ticks, a minute apart, and the fourth tick decides nothing.
func TestSequenceBudgetSpreadsOverTicks(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{
		Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", budgets(disruption.Budget{Nodes: "1"}))},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"a", "default", "medium", od, nil}),
			node(small, nodeSpec{"b", "default", "medium", od, nil}),
			node(small, nodeSpec{"c", "default", "medium", od, nil}),
			node(small, nodeSpec{"busy", "default", "large", od, []*corev1.Pod{annotated(pod("db", "1"), disruption.AnnotationDoNotDisrupt, "true")}}),
		},
	}
	res := disruption.Sequence(in, disruption.SequenceOptions{})
	require.Len(t, res.Commands, 3)
	for i, c := range res.Commands {
		assert.Equal(t, i+1, c.Tick, "one command per tick")
		assert.Len(t, c.Nodes, 1)
		assert.Equal(t, disruption.MethodEmpty, c.Method)
	}
	assert.Equal(t, 4, res.Ticks)
	assert.False(t, res.TickLimitReached)
	assert.Equal(t, []string{"busy"}, seqNodeNames(res.Nodes))
	require.Equal(t, []string{"busy"}, keptNames(res.Kept))
	assert.Contains(t, res.Kept[0].Reason, "do-not-disrupt")
	assert.Len(t, in.Nodes, 4, "the input is not modified")

	limited := disruption.Sequence(in, disruption.SequenceOptions{MaxTicks: 2})
	assert.True(t, limited.TickLimitReached)
	assert.Len(t, limited.Commands, 2)
	assert.Equal(t, 2, limited.Ticks)
	assert.ElementsMatch(t, seqNodeNames(limited.Nodes), keptNames(limited.Kept), "every node left has a reason")
	assert.Len(t, limited.Kept, 2)
}

// TestSequenceReplacementLifecycle: three underused on-demand nodes become one spot replacement
// named r-1 in the first tick; the moved pods go there; the tick completes with r-1 initialized,
// priced at its offering and guarded against churn from the tick's time; the input is untouched.
func TestSequenceReplacementLifecycle(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{
		Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only, consolidateAfter(dur(10*time.Minute)))},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("a", "1")}}),
			node(small, nodeSpec{"n2", "default", "medium", od, []*corev1.Pod{pod("b", "1")}}),
			node(small, nodeSpec{"n3", "default", "medium", od, []*corev1.Pod{pod("c", "1")}}),
		},
	}
	res := disruption.Sequence(in, disruption.SequenceOptions{})
	require.Len(t, res.Commands, 1)
	c := res.Commands[0]
	assert.Equal(t, disruption.ActionReplace, c.Action)
	require.Len(t, c.Replacements, 1)
	assert.Equal(t, "r-1", c.Replacements[0].Name)
	for _, m := range c.Moves {
		assert.Equal(t, "r-1", m.To, m.Pod)
	}
	require.Equal(t, []string{"r-1"}, seqNodeNames(res.Nodes))
	r := res.Nodes[0]
	assert.True(t, r.Initialized)
	assert.Equal(t, "true", r.Node.Labels[scheduling.LabelNodeInitalized])
	assert.Equal(t, c.Replacements[0].Price, r.Price)
	assert.Equal(t, c.Replacements[0].Zone, r.Node.Labels[scheduling.LabelZone])
	assert.Equal(t, scheduling.CapacityTypeSpot, r.Node.Labels[scheduling.LabelCapacityType])
	assert.Equal(t, now, r.ReplacementLaunchedAt)
	assert.Len(t, r.Pods, 3)
	assert.False(t, r.Node.Status.Allocatable.Cpu().IsZero())
	assert.Equal(t, 2, res.Ticks)
	require.Equal(t, []string{"r-1"}, keptNames(res.Kept))
	for _, n := range in.Nodes {
		assert.Len(t, n.Pods, 1, "input node %s keeps its pods", n.Name())
		assert.False(t, n.Disrupting)
	}
}

// TestSequenceReplacementNotReusedInItsTick: in a tick, nothing moves to a replacement launched in
// that tick and it is not disrupted; the next tick may use it.
func TestSequenceReplacementNotReusedInItsTick(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{
		Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"big", "default", "large", od, []*corev1.Pod{pod("w1", "500m")}}),
			node(small, nodeSpec{"m1", "default", "medium", od, []*corev1.Pod{pod("w2", "500m")}}),
		},
	}
	res := disruption.Sequence(in, disruption.SequenceOptions{})
	launched := map[string]int{}
	for _, c := range res.Commands {
		for _, r := range c.Replacements {
			launched[r.Name] = c.Tick
		}
		for _, n := range c.Nodes {
			if tick, ok := launched[n.Name]; ok {
				assert.NotEqual(t, tick, c.Tick, "replacement %s disrupted in the tick that launched it", n.Name)
			}
		}
		for _, m := range c.Moves {
			if tick, ok := launched[m.To]; ok && tick == c.Tick {
				assert.Equal(t, c.Replacements[0].Name, m.To, "pod moved to another command's replacement in its tick")
			}
		}
	}
	assert.NotEmpty(t, res.Commands)
}

// TestSequenceSchedulesAlwaysActive: a budget of 0 scheduled for an hour that is not now blocks
// nothing at Input.Now, but a dry run that treats schedules as active keeps every node.
func TestSequenceSchedulesAlwaysActive(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{
		Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", budgets(
			disruption.Budget{Nodes: "100%"},
			disruption.Budget{Nodes: "0", Schedule: "0 3 * * *", Duration: time.Hour},
		))},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"a", "default", "medium", od, nil}),
			node(small, nodeSpec{"b", "default", "medium", od, nil}),
		},
	}
	assert.Len(t, disruption.Sequence(in, disruption.SequenceOptions{}).Commands, 1)
	res := disruption.Sequence(in, disruption.SequenceOptions{SchedulesAlwaysActive: true})
	assert.Empty(t, res.Commands)
	assert.Equal(t, []string{"a", "b"}, keptNames(res.Kept))
	assert.Contains(t, res.Kept[0].Reason, "budget")
	assert.Equal(t, "0 3 * * *", in.NodePools[0].Budgets[1].Schedule, "the input's pools are not modified")
}

// TestSequenceReplacementNamesAvoidNodes: a replacement never takes an existing node's name.
func TestSequenceReplacementNamesAvoidNodes(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{
		Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", amd64Only)},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"r-1", "default", "large", od, []*corev1.Pod{pod("web", "1"), pod("api", "500m")}}),
		},
	}
	res := disruption.Sequence(in, disruption.SequenceOptions{})
	require.NotEmpty(t, res.Commands)
	require.Len(t, res.Commands[0].Replacements, 1)
	assert.Equal(t, "r-2", res.Commands[0].Replacements[0].Name)
}

// TestSequenceConservesPods plays a generated fragmented cluster (with zone spreads, so no
// compaction, and spot-to-spot on, so that a replacement is launched) to the end and checks the sequence's invariants: every pod of the input is on exactly
// one node at the end; no node left is disrupting or uninitialized; a replacement is never disrupted
// or given another command's pods in the tick that launched it; every command's pods move to a node
// that exists then; and each tick disrupts no more of the pool than its 10% budget of the nodes at
// the start of the tick.
func TestSequenceConservesPods(t *testing.T) {
	in := fragmented(60, 20, 0.6, 11)
	spreadSomeApps(in)
	in.Options.SpotToSpotConsolidation = true
	podsIn := map[string]int{}
	for _, n := range in.Nodes {
		for _, p := range n.Pods {
			podsIn[p.Namespace+"/"+p.Name]++
		}
	}
	res := disruption.Sequence(in, disruption.SequenceOptions{})
	require.NotEmpty(t, res.Commands)
	require.False(t, res.TickLimitReached)
	replaced := 0
	for _, c := range res.Commands {
		replaced += len(c.Replacements)
	}
	t.Logf("%d commands over %d ticks, %d replacements", len(res.Commands), res.Ticks, replaced)
	assert.Greater(t, res.Ticks, 2, "the budget spreads the work over ticks")
	assert.Positive(t, replaced, "the scenario exercises a replacement")
	podsOut := map[string]int{}
	for _, n := range res.Nodes {
		assert.False(t, n.Disrupting, n.Name())
		assert.True(t, n.Initialized, n.Name())
		for _, p := range n.Pods {
			podsOut[p.Namespace+"/"+p.Name]++
		}
	}
	assert.Equal(t, podsIn, podsOut, "every pod ends on exactly one node")

	alive := map[string]bool{}
	for _, n := range in.Nodes {
		alive[n.Name()] = true
	}
	launched := map[string]int{}
	perTick := map[int]int{}
	startNodes := map[int]int{}
	for _, c := range res.Commands {
		if _, ok := startNodes[c.Tick]; !ok {
			startNodes[c.Tick] = len(alive)
		}
		for _, n := range c.Nodes {
			assert.True(t, alive[n.Name], "tick %d disrupts %s, which does not exist", c.Tick, n.Name)
			assert.NotEqual(t, c.Tick, launched[n.Name], "replacement %s disrupted in its own tick", n.Name)
			perTick[c.Tick]++
		}
		own := map[string]bool{}
		for _, r := range c.Replacements {
			own[r.Name] = true
		}
		for _, m := range c.Moves {
			if tick, ok := launched[m.To]; ok && tick == c.Tick {
				assert.True(t, own[m.To], "pod %s moved to another command's replacement %s in its tick", m.Pod, m.To)
			}
			assert.True(t, alive[m.To] || own[m.To], "pod %s moved to %s, which does not exist", m.Pod, m.To)
		}
		for _, n := range c.Nodes {
			delete(alive, n.Name)
		}
		for _, r := range c.Replacements {
			launched[r.Name] = c.Tick
			alive[r.Name] = true
		}
	}
	for tick, n := range perTick {
		assert.LessOrEqual(t, n, (10*startNodes[tick]+99)/100, "tick %d", tick)
	}
}

// BenchmarkSequence plays generated fragmented clusters (fragmented, 60% of pods removed, the 10%
// budget) to the end and reports the ticks, commands and simulations.
func BenchmarkSequence(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			in := fragmented(n, 20, 0.6, 42)
			var res disruption.SequenceResult
			for b.Loop() {
				res = disruption.Sequence(in, disruption.SequenceOptions{})
			}
			b.ReportMetric(float64(res.Ticks), "ticks")
			b.ReportMetric(float64(len(res.Commands)), "commands")
			b.ReportMetric(float64(res.Simulations), "sims")
		})
	}
}

// TestSequenceMemoMatchesFullSearch: skipping, in the rest of a tick, the single-node candidates
// already found invalid in that tick (memo.go) gives the same sequence (commands, kept nodes and
// reasons, nodes at the end) as simulating them again, with fewer simulations; and replacements
// of a tick take no other command's pods, so a tick may hold several replaces.
func TestSequenceMemoMatchesFullSearch(t *testing.T) {
	saved, mostReplaces := false, 0
	for _, tc := range []struct {
		seed       uint64
		removed    float64
		spotToSpot bool
		spread     bool
	}{{3, 0.2, false, false}, {3, 0.5, false, false}, {3, 0.2, true, false}, {5, 0.6, true, false}, {8, 0.6, false, false},
		{3, 0.5, false, true}, {5, 0.6, true, true}} {
		t.Run(fmt.Sprintf("seed=%d/removed=%v/spot-to-spot=%v/spread=%v", tc.seed, tc.removed, tc.spotToSpot, tc.spread), func(t *testing.T) {
			in := fragmented(150, 20, tc.removed, tc.seed)
			in.Options.SpotToSpotConsolidation = tc.spotToSpot
			if tc.spread {
				spreadSomeApps(in)
			}
			memo := disruption.Sequence(in, disruption.SequenceOptions{})
			full := disruption.Sequence(in, disruption.WithoutMemo(disruption.SequenceOptions{}))
			assert.Equal(t, full.Commands, memo.Commands)
			assert.Equal(t, full.Kept, memo.Kept)
			assert.Equal(t, full.Nodes, memo.Nodes)
			assert.Equal(t, full.Ticks, memo.Ticks)
			assert.LessOrEqual(t, memo.Simulations, full.Simulations)
			saved = saved || memo.Simulations < full.Simulations
			replaces := map[int]int{}
			for _, c := range memo.Commands {
				if len(c.Replacements) > 0 {
					replaces[c.Tick]++
				}
			}
			for _, n := range replaces {
				mostReplaces = max(mostReplaces, n)
			}
		})
	}
	assert.True(t, saved, "the memo saves simulations")
	assert.Greater(t, mostReplaces, 1, "a tick holds several replace commands")
}

// TestSequenceReuseMatchesFreshReads: a Sequence whose Decides prepare the cluster from the one
// before (scheduling.PrepareFrom) and share PDB answers decides what one reading everything afresh
// in every Decide does, with spreads and without, both rule sets.
func TestSequenceReuseMatchesFreshReads(t *testing.T) {
	for _, tc := range []struct {
		seed       uint64
		removed    float64
		spotToSpot bool
		spread     bool
	}{{3, 0.5, false, false}, {5, 0.6, true, false}, {3, 0.5, false, true}, {5, 0.6, true, true}, {8, 0.4, false, true}} {
		t.Run(fmt.Sprintf("seed=%d/removed=%v/spot-to-spot=%v/spread=%v", tc.seed, tc.removed, tc.spotToSpot, tc.spread), func(t *testing.T) {
			in := fragmented(150, 20, tc.removed, tc.seed)
			in.Options.SpotToSpotConsolidation = tc.spotToSpot
			if tc.spread {
				spreadSomeApps(in)
			}
			reused := disruption.Sequence(in, disruption.SequenceOptions{})
			fresh := disruption.Sequence(in, disruption.WithoutReuse(disruption.SequenceOptions{}))
			require.NotEmpty(t, fresh.Commands)
			assert.Equal(t, fresh.Commands, reused.Commands)
			assert.Equal(t, fresh.Kept, reused.Kept)
			assert.Equal(t, fresh.Nodes, reused.Nodes)
			assert.Equal(t, fresh.Ticks, reused.Ticks)
			assert.Equal(t, fresh.Simulations, reused.Simulations)
		})
	}
}
