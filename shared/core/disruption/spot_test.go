package disruption_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestSpotToSpot(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	realistic := schedulingtest.RealisticInstanceTypes()
	spot, od := scheduling.CapacityTypeSpot, scheduling.CapacityTypeOnDemand
	cases := []struct {
		name     string
		catalog  []*scheduling.InstanceType
		nodes    func([]*scheduling.InstanceType) []disruption.Node
		enabled  bool
		options  int    // replacement options expected; 0 means no command
		kept     string // reason of the first node when there is no command
		keptNode string
	}{
		{
			name: "single spot node: off by default", catalog: realistic, keptNode: "n1",
			nodes: func(c []*scheduling.InstanceType) []disruption.Node {
				return []disruption.Node{node(c, nodeSpec{"n1", "default", "m5.4xlarge", spot, []*corev1.Pod{pod("a", "1"), pod("b", "1")}})}
			},
			kept: "spot-to-spot consolidation is disabled",
		},
		{
			name: "single spot node: enabled, launches with the 15 cheapest cheaper spot types", catalog: realistic, enabled: true,
			nodes: func(c []*scheduling.InstanceType) []disruption.Node {
				return []disruption.Node{node(c, nodeSpec{"n1", "default", "m5.4xlarge", spot, []*corev1.Pod{pod("a", "1"), pod("b", "1")}})}
			},
			options: disruption.MinSpotToSpotTypes,
		},
		{
			name: "single spot node: fewer than 15 cheaper spot types", catalog: small, enabled: true, keptNode: "n1",
			nodes: func(c []*scheduling.InstanceType) []disruption.Node {
				return []disruption.Node{node(c, nodeSpec{"n1", "default", "large", spot, []*corev1.Pod{pod("a", "1"), pod("b", "500m")}})}
			},
			kept: "needs at least 15 cheaper spot instance types, found 2",
		},
		{
			// Four medium spot nodes with a 1 CPU / 5Gi pod each: no pod fits beside another, three
			// go onto one large spot node ($0.16 < 3 × $0.08), the only cheaper type.
			name: "multi-node spot to spot has no 15-type floor", catalog: small, enabled: true, options: 1,
			nodes: fourMediumSpot,
		},
		{
			// Off, only on-demand could replace spot nodes, and on-demand costs more: the LP bound
			// proves it before any simulation.
			name: "multi-node spot to spot is off by default too", catalog: small, keptNode: "n1",
			nodes: fourMediumSpot,
			kept:  "LP lower bound",
		},
		{
			// large itself is dropped from the options: a candidate is a large at $0.16.
			name: "spot and on-demand together are not spot-to-spot", catalog: small, options: 1,
			nodes: func(c []*scheduling.InstanceType) []disruption.Node {
				return []disruption.Node{
					node(c, nodeSpec{"n1", "default", "large", spot, []*corev1.Pod{pod("a", "1")}}),
					node(c, nodeSpec{"n2", "default", "large", od, []*corev1.Pod{pod("b", "1")}}),
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := disruption.Input{
				Now: now, InstanceTypes: tc.catalog, Nodes: tc.nodes(tc.catalog),
				NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)},
				Options:   disruption.Options{SpotToSpotConsolidation: tc.enabled},
			}
			res := disruption.Decide(in)
			if tc.options == 0 {
				assert.Empty(t, res.Commands)
				assert.Contains(t, keptReason(res, tc.keptNode), tc.kept)
				return
			}
			require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
			cmd := res.Commands[0]
			require.Equal(t, disruption.ActionReplace, cmd.Action)
			r := cmd.Replacements[0]
			assert.Len(t, r.InstanceTypeOptions, tc.options)
			assert.Equal(t, spot, r.CapacityType)
			total := 0.0
			for _, n := range cmd.Nodes {
				total += n.PricePerHour
			}
			assert.Less(t, r.Price, total)
			assert.InDelta(t, total-r.Price, cmd.SavingsPerHour, 1e-9)
		})
	}
}

func fourMediumSpot(c []*scheduling.InstanceType) []disruption.Node {
	var out []disruption.Node
	for _, name := range []string{"n1", "n2", "n3", "n4"} {
		p := schedulingtest.Pod(schedulingtest.PodOptions{Name: "p" + name, Owner: "p" + name, CPU: "1", Memory: "5Gi"})
		out = append(out, node(c, nodeSpec{name, "default", "medium", scheduling.CapacityTypeSpot, []*corev1.Pod{p}}))
	}
	return out
}

func TestSpotToSpotKeepsTheCheapest(t *testing.T) {
	realistic := schedulingtest.RealisticInstanceTypes()
	n := node(realistic, nodeSpec{"n1", "default", "m5.4xlarge", scheduling.CapacityTypeSpot, []*corev1.Pod{pod("a", "1"), pod("b", "1")}})
	res := disruption.Decide(disruption.Input{
		Now: now, InstanceTypes: realistic, Nodes: []disruption.Node{n},
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)},
		Options:   disruption.Options{SpotToSpotConsolidation: true},
	})
	require.Len(t, res.Commands, 1)
	r := res.Commands[0].Replacements[0]
	chosen := map[string]bool{}
	for _, name := range r.InstanceTypeOptions {
		chosen[name] = true
	}
	// Every option's cheapest spot offering is no dearer than that of any amd64 type left out that
	// holds the pods (4 vCPU or more) and is cheaper than the node.
	cheapest := func(it *scheduling.InstanceType) float64 {
		best := 1e9
		for _, o := range it.Offerings {
			if o.CapacityType == scheduling.CapacityTypeSpot {
				best = min(best, o.Price)
			}
		}
		return best
	}
	maxChosen := 0.0
	for _, it := range realistic {
		if chosen[it.Name] {
			maxChosen = max(maxChosen, cheapest(it))
		}
	}
	for _, it := range realistic {
		arch := it.Requirements.Get(scheduling.LabelArch)
		if chosen[it.Name] || !arch.Has("amd64") || it.Capacity.CPU < 4000 || cheapest(it) >= n.Price {
			continue
		}
		assert.GreaterOrEqual(t, cheapest(it), maxChosen, "%s left out but cheaper than a chosen type", it.Name)
	}
}

// TestChurnGuard: a node launched as a replacement less than consolidateAfter ago may be deleted
// but not replaced.
func TestChurnGuard(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	cases := []struct {
		name        string
		replacedAgo time.Duration
		withSink    bool
		action      disruption.Action
	}{
		{name: "recent replacement is not replaced", replacedAgo: time.Minute},
		{name: "recent replacement may still be deleted", replacedAgo: time.Minute, withSink: true, action: disruption.ActionDelete},
		{name: "an older replacement may be replaced", replacedAgo: 6 * time.Minute, action: disruption.ActionReplace},
		{name: "a node that replaced nothing may be replaced", action: disruption.ActionReplace},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := node(small, nodeSpec{"n1", "default", "large", od, []*corev1.Pod{pod("web", "1")}})
			// consolidateAfter counts from the last pod event, which is old enough here; only the
			// churn guard is in the way.
			n.LaunchedAt, n.LastPodEvent = time.Time{}, now.Add(-time.Hour)
			if tc.replacedAgo > 0 {
				n.ReplacementLaunchedAt = now.Add(-tc.replacedAgo)
			}
			nodes := []disruption.Node{n}
			if tc.withSink {
				nodes = append(nodes, bigUnmanaged("sink"))
			}
			res := disruption.Decide(disruption.Input{
				Now: now, InstanceTypes: small, Nodes: nodes,
				NodePools: []disruption.NodePool{pool("default", consolidateAfter(dur(5*time.Minute)), amd64Only)},
			})
			if tc.action == "" {
				assert.Empty(t, res.Commands)
				assert.Contains(t, keptReason(res, "n1"), "launched as a replacement")
				return
			}
			require.Len(t, res.Commands, 1)
			assert.Equal(t, tc.action, res.Commands[0].Action)
		})
	}
}
