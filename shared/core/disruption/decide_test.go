package disruption_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestDecideMethods(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	cases := []struct {
		name     string
		pools    []disruption.NodePool
		nodes    []disruption.Node
		method   disruption.Method
		action   disruption.Action
		nodesOut []string
		// replacement is the launch the replacement takes: instance type and capacity type.
		replacement []string
		savings     float64
		moves       map[string]string
	}{
		{
			name:  "empty nodes are deleted together; DaemonSet and mirror pods do not count",
			pools: []disruption.NodePool{pool("default", unlimitedBudget)},
			nodes: []disruption.Node{
				node(small, nodeSpec{"a", "default", "medium", od, []*corev1.Pod{daemonPod("ds-a"), mirrorPod("static-a")}}),
				node(small, nodeSpec{"b", "default", "large", od, nil}),
				node(small, nodeSpec{"c", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}),
			},
			method: disruption.MethodEmpty, action: disruption.ActionDelete, nodesOut: []string{"a", "b"}, savings: 0.60,
		},
		{
			name:  "multi-node delete: two underused nodes move onto the third",
			pools: []disruption.NodePool{pool("default", unlimitedBudget)},
			nodes: []disruption.Node{
				node(small, nodeSpec{"big", "default", "large", od, []*corev1.Pod{annotated(pod("db", "4"), disruption.AnnotationDoNotDisrupt, "true")}}),
				node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}),
				node(small, nodeSpec{"n2", "default", "medium", od, []*corev1.Pod{pod("api", "1")}}),
			},
			method: disruption.MethodMulti, action: disruption.ActionDelete, nodesOut: []string{"n1", "n2"}, savings: 0.40,
			moves: map[string]string{"default/web": "big", "default/api": "big"},
		},
		{
			name:  "multi-node replace: three on-demand nodes become one spot node",
			pools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)},
			nodes: []disruption.Node{
				node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("a", "1")}}),
				node(small, nodeSpec{"n2", "default", "medium", od, []*corev1.Pod{pod("b", "1")}}),
				node(small, nodeSpec{"n3", "default", "medium", od, []*corev1.Pod{pod("c", "1")}}),
			},
			method: disruption.MethodMulti, action: disruption.ActionReplace, nodesOut: []string{"n1", "n2", "n3"},
			replacement: []string{"medium", scheduling.CapacityTypeSpot}, savings: 0.60 - 0.08,
		},
		{
			name:  "single-node delete: the only candidate moves to an unmanaged node",
			pools: []disruption.NodePool{pool("default")},
			nodes: []disruption.Node{
				bigUnmanaged("other"),
				node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}),
			},
			method: disruption.MethodSingle, action: disruption.ActionDelete, nodesOut: []string{"n1"}, savings: 0.20,
			moves: map[string]string{"default/web": "other"},
		},
		{
			name:  "single-node replace with a strictly cheaper spot node",
			pools: []disruption.NodePool{pool("default", amd64Only)},
			nodes: []disruption.Node{
				node(small, nodeSpec{"n1", "default", "large", od, []*corev1.Pod{pod("web", "1"), pod("api", "500m")}}),
			},
			method: disruption.MethodSingle, action: disruption.ActionReplace, nodesOut: []string{"n1"},
			replacement: []string{"small", scheduling.CapacityTypeSpot}, savings: 0.40 - 0.04,
		},
		{
			name:  "single-node replace on-demand only: medium becomes small",
			pools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only)},
			nodes: []disruption.Node{
				node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("web", "1500m")}}),
			},
			method: disruption.MethodSingle, action: disruption.ActionReplace, nodesOut: []string{"n1"},
			replacement: []string{"small", od}, savings: 0.10,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := disruption.Decide(disruption.Input{Now: now, Nodes: tc.nodes, NodePools: tc.pools, InstanceTypes: small})
			require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
			cmd := res.Commands[0]
			assert.Equal(t, tc.method, cmd.Method)
			assert.Equal(t, tc.action, cmd.Action)
			assert.Equal(t, tc.nodesOut, nodeNames(cmd))
			assert.InDelta(t, tc.savings, cmd.SavingsPerHour, 1e-9)
			assert.NotEmpty(t, cmd.Why)
			if tc.method == disruption.MethodEmpty {
				assert.Equal(t, disruption.ReasonEmpty, cmd.Reason)
			} else {
				assert.Equal(t, disruption.ReasonUnderutilized, cmd.Reason)
			}
			for pod, to := range tc.moves {
				assert.Contains(t, cmd.Moves, disruption.Move{Pod: pod, To: to})
			}
			if tc.replacement == nil {
				assert.Empty(t, cmd.Replacements)
				return
			}
			require.Len(t, cmd.Replacements, 1)
			r := cmd.Replacements[0]
			assert.Equal(t, tc.replacement, []string{r.InstanceType, r.CapacityType})
			total := 0.0
			for _, n := range cmd.Nodes {
				total += n.PricePerHour
			}
			assert.Less(t, r.Price, total, "never a replacement more expensive than what it replaces")
			reqs, err := scheduling.RequirementsFromSpecs(r.Requirements)
			require.NoError(t, err)
			assert.Equal(t, []string{r.CapacityType}, reqs.Get(scheduling.LabelCapacityType).Values(), "the replacement is pinned to the capacity type it was priced in")
			for _, name := range r.InstanceTypeOptions {
				assert.True(t, reqs.Get(scheduling.LabelInstanceType).Has(name))
			}
			for _, m := range cmd.Moves {
				assert.True(t, m.To == r.Name || m.To != "", "pod %s goes somewhere", m.Pod)
			}
		})
	}
}

func TestReplaceRejectedWhenNotCheaper(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	in := disruption.Input{
		Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only)},
		// small is the cheapest on-demand type that holds 1.5 CPU: nothing is cheaper.
		Nodes: []disruption.Node{node(small, nodeSpec{"n1", "default", "small", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1500m")}})},
	}
	res := disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Contains(t, keptReason(res, "n1"), "costs less than")
	assert.Equal(t, 1, res.Simulations)
}

func TestLowerBoundSkipsHopelessSimulations(t *testing.T) {
	// Only small on-demand: a pod of 1.9 CPU on a small node (1.9 CPU allocatable at $0.10/h) cannot
	// be moved anywhere for less, and the LP bound proves it without a simulation.
	var catalog []*scheduling.InstanceType
	for _, it := range schedulingtest.SmallCatalog()[:1] {
		var offs []scheduling.Offering
		for _, o := range it.Offerings {
			if o.CapacityType == scheduling.CapacityTypeOnDemand {
				offs = append(offs, o)
			}
		}
		labels := it.Requirements.Labels()
		delete(labels, scheduling.LabelZone)
		delete(labels, scheduling.LabelCapacityType)
		catalog = append(catalog, scheduling.NewInstanceType(it.Name, labels, it.Capacity, it.Allocatable, offs))
	}
	cases := []struct {
		name string
		cpu  string
		sims int
	}{
		{"bound proves no saving", "1900m", 0},
		{"bound allows a saving, so the simulation runs", "1", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := disruption.Input{
				Now: now, InstanceTypes: catalog, NodePools: []disruption.NodePool{pool("default", amd64Only)},
				Nodes: []disruption.Node{node(catalog, nodeSpec{"n1", "default", "small", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", tc.cpu)}})},
			}
			res := disruption.Decide(in)
			assert.Empty(t, res.Commands)
			assert.Equal(t, tc.sims, res.Simulations)
			if tc.sims == 0 {
				assert.Contains(t, keptReason(res, "n1"), "LP lower bound")
			}
		})
	}
}

func TestMultiNodeHasNoCandidateCap(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	nodes := []disruption.Node{bigUnmanaged("sink")}
	for i := range 120 {
		name := fmt.Sprintf("n%03d", i)
		nodes = append(nodes, node(small, nodeSpec{name, "default", "small", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("p"+name, "100m")}}))
	}
	res := disruption.Decide(disruption.Input{Now: now, Nodes: nodes, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", unlimitedBudget)}})
	require.Len(t, res.Commands, 1)
	cmd := res.Commands[0]
	assert.Equal(t, disruption.MethodMulti, cmd.Method)
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Len(t, cmd.Nodes, 120, "Karpenter caps multi-node at 100 candidates; Nodewright does not")
	assert.InDelta(t, 12.0, cmd.SavingsPerHour, 1e-9)
}

func TestIncompleteInputDecidesNothing(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	in := disruption.Input{
		Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", unlimitedBudget)},
		Nodes:      []disruption.Node{node(small, nodeSpec{"a", "default", "medium", scheduling.CapacityTypeOnDemand, nil})},
		Incomplete: "listing pods failed",
	}
	res := disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Contains(t, res.Skipped, "listing pods failed")
	in.Incomplete = ""
	assert.Len(t, disruption.Decide(in).Commands, 1, "the same snapshot, complete, deletes the empty node")
}

func TestSearchBudget(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := func(o disruption.Options) disruption.Input {
		return disruption.Input{
			Now: now, InstanceTypes: small, Options: o,
			NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)},
			Nodes: []disruption.Node{
				node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("a", "1500m")}}),
				node(small, nodeSpec{"n2", "default", "medium", od, []*corev1.Pod{pod("b", "1500m")}}),
				node(small, nodeSpec{"n3", "default", "medium", od, []*corev1.Pod{pod("c", "1500m")}}),
				node(small, nodeSpec{"empty", "default", "medium", od, nil}),
			},
		}
	}
	t.Run("no time left still deletes empty nodes, which need no simulation", func(t *testing.T) {
		res := disruption.Decide(in(disruption.Options{TimeLeft: func() bool { return false }}))
		require.Len(t, res.Commands, 1)
		assert.Equal(t, disruption.MethodEmpty, res.Commands[0].Method)
		assert.Zero(t, res.Simulations)
	})
	withoutEmpty := func(o disruption.Options) disruption.Input {
		i := in(o)
		i.Nodes = i.Nodes[:3]
		return i
	}
	t.Run("no time left stops before any simulation", func(t *testing.T) {
		res := disruption.Decide(withoutEmpty(disruption.Options{TimeLeft: func() bool { return false }}))
		assert.Empty(t, res.Commands)
		assert.True(t, res.SearchStopped)
		assert.Zero(t, res.Simulations)
	})
	t.Run("one simulation: multi-node keeps the command it found", func(t *testing.T) {
		res := disruption.Decide(withoutEmpty(disruption.Options{MaxSimulations: 1}))
		assert.Equal(t, 1, res.Simulations)
		assert.True(t, res.SearchStopped)
		require.Len(t, res.Commands, 1)
		assert.Equal(t, disruption.MethodMulti, res.Commands[0].Method)
	})
	t.Run("unlimited", func(t *testing.T) {
		res := disruption.Decide(withoutEmpty(disruption.Options{}))
		assert.False(t, res.SearchStopped)
		require.Len(t, res.Commands, 1)
		assert.Len(t, res.Commands[0].Nodes, 3)
	})
}

// TestMovesOnlyToInitializedNodes: a consolidation that relies on a node still booting, or on a
// claim not registered yet, is rejected (the node may never come up).
func TestMovesOnlyToInitializedNodes(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	cases := []struct {
		name   string
		modify func(*disruption.Input)
		kept   string
	}{
		{name: "initialized sink: deleted", modify: func(*disruption.Input) {}},
		{
			// A node not up takes no pod of a simulation: the pod needs a new node, no cheaper.
			name:   "sink not initialized",
			modify: func(in *disruption.Input) { in.Nodes[0].Initialized = false },
			kept:   "no instance type that holds the pods costs less than $0.1000/h",
		},
		{
			name: "in-flight claim with room",
			modify: func(in *disruption.Input) {
				in.Nodes = in.Nodes[1:]
				in.InFlight = []scheduling.InFlightClaim{{
					Name: "booting", NodePool: "default",
					Labels:   map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux", scheduling.LabelInstanceType: "large", scheduling.LabelZone: schedulingtest.Zones[0], scheduling.LabelCapacityType: scheduling.CapacityTypeOnDemand},
					Capacity: small[3].Capacity, Allocatable: small[3].Allocatable,
				}}
			},
			kept: "would move to booting, which is not initialized yet",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := disruption.Input{
				Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only)},
				Nodes: []disruption.Node{
					bigUnmanaged("sink"),
					node(small, nodeSpec{"n1", "default", "small", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1500m")}}),
				},
			}
			tc.modify(&in)
			res := disruption.Decide(in)
			if tc.kept == "" {
				require.Len(t, res.Commands, 1)
				assert.Equal(t, disruption.ActionDelete, res.Commands[0].Action)
				return
			}
			assert.Empty(t, res.Commands)
			assert.Contains(t, keptReason(res, "n1"), tc.kept)
		})
	}
}

// TestANodeNotUpTakesNoPodOfASimulation: a node that has not initialized keeps its pods but takes
// none of a candidate's (as a replacement of the same tick does, memo.go), so the candidate's pods
// go to a cheaper replacement instead of making the command invalid, as Karpenter's would be.
// With pending pods, which may be waiting for that node, it stays open and the command is refused.
func TestANodeNotUpTakesNoPodOfASimulation(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	build := func() disruption.Input {
		sink := bigUnmanaged("sink")
		sink.Initialized = false
		return disruption.Input{
			Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only)},
			Nodes: []disruption.Node{sink,
				node(small, nodeSpec{"n1", "default", "large", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1500m")}})},
		}
	}
	res := disruption.Decide(build())
	require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
	c := res.Commands[0]
	assert.Equal(t, disruption.ActionReplace, c.Action)
	require.Len(t, c.Replacements, 1)
	assert.Equal(t, []disruption.Move{{Pod: "default/web", To: c.Replacements[0].Name}}, c.Moves)

	in := build()
	in.PendingPods = []*corev1.Pod{pod("waiting", "100m")}
	res = disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Contains(t, keptReason(res, "n1"), "would move to sink, which is not initialized yet")
}

// TestMultiNodeTriesTheWholeListFirst: when every underused candidate can be deleted at once,
// multi-node finds it with one simulation (a binary search over four candidates takes two to get
// there), and the command deletes them all.
func TestMultiNodeTriesTheWholeListFirst(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{
		Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"sink", "", "large", od, nil}),
			node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("a", "500m")}}),
			node(small, nodeSpec{"n2", "default", "medium", od, []*corev1.Pod{pod("b", "500m")}}),
			node(small, nodeSpec{"n3", "default", "medium", od, []*corev1.Pod{pod("c", "500m")}}),
			node(small, nodeSpec{"n4", "default", "medium", od, []*corev1.Pod{pod("d", "500m")}}),
		},
	}
	res := disruption.Decide(in)
	require.Len(t, res.Commands, 1)
	cmd := res.Commands[0]
	assert.Equal(t, disruption.MethodMulti, cmd.Method)
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Len(t, cmd.Nodes, 4)
	assert.Equal(t, 1, res.Simulations)
}
