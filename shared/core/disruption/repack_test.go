package disruption_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// repackCluster is five on-demand large nodes ($0.40/h each) with 3-CPU pods, one pod each but
// the last, which has two 1-CPU pods: 14 CPU in all, more than one large (7.9 CPU) holds.
func repackCluster() []disruption.Node {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	return []disruption.Node{
		node(small, nodeSpec{"n1", "default", "large", od, []*corev1.Pod{pod("a", "3")}}),
		node(small, nodeSpec{"n2", "default", "large", od, []*corev1.Pod{pod("b", "3")}}),
		node(small, nodeSpec{"n3", "default", "large", od, []*corev1.Pod{pod("c", "3")}}),
		node(small, nodeSpec{"n4", "default", "large", od, []*corev1.Pod{pod("d", "3")}}),
		node(small, nodeSpec{"n5", "default", "large", od, []*corev1.Pod{pod("e", "1"), pod("f", "1")}}),
	}
}

// TestMultiNodeRepacksOntoSeveralNodes: several nodes may be replaced by several new ones, fewer
// than they are and cheaper together, where Karpenter's one-replacement rule only merges two: the
// five large on-demand nodes become two large spot nodes. Each replacement keeps only the options
// below its share of the saving, so whatever the launches take, the command saves money.
func TestMultiNodeRepacksOntoSeveralNodes(t *testing.T) {
	in := disruption.Input{Now: now, Nodes: repackCluster(), NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)}, InstanceTypes: schedulingtest.SmallCatalog()}
	res := disruption.Decide(in)
	require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
	cmd := res.Commands[0]
	assert.Equal(t, disruption.MethodMulti, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	assert.Equal(t, []string{"n1", "n2", "n3", "n4", "n5"}, nodeNames(cmd))
	require.Len(t, cmd.Replacements, 2)
	spent, worst := 0.0, 0.0
	for _, r := range cmd.Replacements {
		assert.Equal(t, "large", r.InstanceType)
		assert.Equal(t, scheduling.CapacityTypeSpot, r.CapacityType)
		most := 0.0
		for _, name := range r.InstanceTypeOptions {
			for _, it := range in.InstanceTypes {
				for _, o := range it.Offerings {
					if it.Name == name && o.CapacityType == scheduling.CapacityTypeSpot {
						most = max(most, o.Price)
					}
				}
			}
		}
		spent += r.Price
		worst += most
	}
	assert.Less(t, worst, 5*0.40, "the replacements cost less than the nodes whichever options they launch")
	assert.InDelta(t, 5*0.40-spent, cmd.SavingsPerHour, 1e-9)
	assert.Contains(t, cmd.Why, "with 2 cheaper nodes (2 × spot large")
	onReplacement := map[string]int{}
	for _, m := range cmd.Moves {
		onReplacement[m.To]++
	}
	assert.Len(t, onReplacement, 2, "the pods are spread over both replacements: %v", cmd.Moves)

	assert.NoError(t, disruption.Validate(cmd, in), "the same cluster confirms the command")

	// A pod that arrived since needs a third new node: the command no longer holds.
	fresh := in
	fresh.Nodes = repackCluster()
	fresh.Nodes[4].Pods = append(fresh.Nodes[4].Pods, pod("g", "6"))
	fresh.Nodes[4].Pods[2].Spec.NodeName = "n5"
	err := disruption.Validate(cmd, fresh)
	var verr *disruption.ValidationError
	require.ErrorAs(t, err, &verr)
	assert.Equal(t, disruption.ValidationScheduling, verr.Kind)
	assert.Contains(t, verr.Reason, "launches 2 replacements, the fresh simulation needs 3")
}

// TestReplacementsAreFewerThanTheNodes: two nodes whose pods need two new nodes are not replaced
// together (that would only trade nodes one for one); each is replaced on its own, as a single
// node, when that is cheaper.
func TestReplacementsAreFewerThanTheNodes(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", unlimitedBudget, amd64Only)},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"n1", "default", "large", od, []*corev1.Pod{pod("a", "6")}}),
			node(small, nodeSpec{"n2", "default", "large", od, []*corev1.Pod{pod("b", "6")}}),
		}}
	res := disruption.Decide(in)
	require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
	cmd := res.Commands[0]
	assert.Equal(t, disruption.MethodSingle, cmd.Method)
	require.Len(t, cmd.Replacements, 1)
	assert.Equal(t, scheduling.CapacityTypeSpot, cmd.Replacements[0].CapacityType)
}
