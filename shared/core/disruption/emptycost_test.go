package disruption_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// freePod is a pod whose eviction costs nothing: its pod-deletion-cost is the lowest there is, so
// EvictionCost clamps it to -10.
func freePod(name string) *corev1.Pod {
	return annotated(pod(name, "1"), disruption.AnnotationPodDeletionCost, "-2147483648")
}

// priorityPod is a pod of the given priority.
func priorityPod(name string, priority int32) *corev1.Pod {
	p := pod(name, "1")
	p.Spec.Priority = &priority
	return p
}

// TestEmptyMeansNothingCostsToEvict: a node is empty as Karpenter counts it when its reschedulable
// pods add nothing to the node's base disruption cost (RescheduleDisruptionCost ≤ 1): no pods, or
// only pods whose eviction cost is zero or less. Under WhenEmpty such a node is deleted by the Empty
// method; a pod whose eviction costs a little keeps it.
func TestEmptyMeansNothingCostsToEvict(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	cases := []struct {
		name  string
		pods  []*corev1.Pod
		empty bool
		why   string
	}{
		{name: "no pods", empty: true, why: "no pods to move"},
		{name: "a pod with the lowest pod-deletion-cost", pods: []*corev1.Pod{freePod("batch")}, empty: true,
			why: "empty but for 1 pods whose eviction costs nothing"},
		{name: "a pod of priority -2^25 costs exactly 0", pods: []*corev1.Pod{priorityPod("batch", -(1 << 25))}, empty: true,
			why: "empty but for 1 pods whose eviction costs nothing"},
		{name: "two free pods", pods: []*corev1.Pod{freePod("a"), priorityPod("b", -(1 << 30))}, empty: true,
			why: "empty but for 2 pods whose eviction costs nothing"},
		{name: "a pod of priority -2^25+2^20 costs a little", pods: []*corev1.Pod{priorityPod("batch", -(1<<25)+(1<<20))}},
		{name: "a free pod beside a plain one", pods: []*corev1.Pod{freePod("batch"), pod("web", "1")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := disruption.Decide(disruption.Input{
				Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", policy(disruption.WhenEmpty))},
				Nodes: []disruption.Node{bigUnmanaged("sink"), node(small, nodeSpec{"n", "default", "medium", od, tc.pods})},
			})
			if !tc.empty {
				assert.Empty(t, res.Commands)
				assert.Contains(t, keptReason(res, "n"), "consolidates only empty nodes (WhenEmpty)")
				return
			}
			require.Len(t, res.Commands, 1, "kept: %+v", res.Kept)
			cmd := res.Commands[0]
			assert.Equal(t, disruption.ReasonEmpty, cmd.Reason)
			assert.Equal(t, disruption.MethodEmpty, cmd.Method)
			assert.Equal(t, disruption.ActionDelete, cmd.Action)
			assert.Equal(t, []string{"n"}, nodeNames(cmd))
			assert.Empty(t, cmd.Moves, "the pods are drained with the node, not moved first")
			assert.Contains(t, cmd.Why, tc.why)
		})
	}
}

// TestFreePodNodesGoToEmptyNotConsolidation: under WhenEmptyOrUnderutilized a node holding only pods
// whose eviction costs nothing is taken by the Empty method (reason Empty, its budget), as in
// Karpenter, not by multi-node or single-node consolidation (reason Underutilized).
func TestFreePodNodesGoToEmptyNotConsolidation(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{
		Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", unlimitedBudget)},
		Nodes: []disruption.Node{
			bigUnmanaged("sink"),
			node(small, nodeSpec{"free", "default", "medium", od, []*corev1.Pod{freePod("batch")}}),
			node(small, nodeSpec{"busy", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}),
		},
	}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonEmpty, cmd.Reason)
	assert.Equal(t, []string{"free"}, nodeNames(cmd))

	t.Run("the Empty budget holds it back", func(t *testing.T) {
		in := in
		in.NodePools = []disruption.NodePool{pool("default", budgets(
			disruption.Budget{Nodes: "0", Reasons: []disruption.Reason{disruption.ReasonEmpty}},
			disruption.Budget{Nodes: "100%"}))}
		res := disruption.Decide(in)
		for _, c := range res.Commands {
			assert.NotContains(t, nodeNames(c), "free", "an empty node is not consolidated as Underutilized")
		}
		assert.Contains(t, keptReason(res, "free"), "budget for Empty")
	})
}

// TestValidateEmptyToleratesFreePods: an Empty command stays valid when only pods whose eviction
// costs nothing arrived on its node; a pod that costs something makes it invalid.
func TestValidateEmptyToleratesFreePods(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	in := func(pods ...*corev1.Pod) disruption.Input {
		n := node(small, nodeSpec{"e", "default", "medium", scheduling.CapacityTypeOnDemand, pods})
		return disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default")}, Nodes: []disruption.Node{n}}
	}
	cmd := decideOne(t, in())
	require.Equal(t, disruption.ReasonEmpty, cmd.Reason)
	assert.NoError(t, disruption.Validate(cmd, in(freePod("batch"))))
	err := disruption.Validate(cmd, in(freePod("batch"), pod("web", "1")))
	var ve *disruption.ValidationError
	require.True(t, errors.As(err, &ve), "got %v", err)
	assert.Equal(t, disruption.ValidationCandidate, ve.Kind)
	assert.Contains(t, ve.Reason, "no longer empty (1 pods whose eviction has a cost would have to move)")
}

// TestDriftEmptyFirstMeansNoPods: drift puts first the drifted nodes with no reschedulable pod, as
// Karpenter's drift does (it does not use the Empty method's cost rule): with a Drifted budget of
// one, an older drifted node holding only a free pod waits for a newer one with no pods, and when
// it goes, its pod is placed like any drifted node's.
func TestDriftEmptyFirstMeansNoPods(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	oneDrift := budgets(disruption.Budget{Nodes: "1", Reasons: []disruption.Reason{disruption.ReasonDrifted}})
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", oneDrift, consolidateAfter(nil))},
		Nodes: []disruption.Node{
			driftedAt(node(small, nodeSpec{"a", "default", "medium", od, []*corev1.Pod{freePod("batch")}}), now.Add(-3*time.Hour)),
			driftedAt(node(small, nodeSpec{"b", "default", "medium", od, nil}), now.Add(-time.Hour)),
			node(small, nodeSpec{"c", "default", "large", od, []*corev1.Pod{pod("web", "1")}}),
		}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.MethodDrift, cmd.Method)
	assert.Equal(t, []string{"b"}, nodeNames(cmd))
	assert.Empty(t, cmd.Moves)

	in.Nodes = append(in.Nodes[:1], in.Nodes[2])
	cmd = decideOne(t, in)
	assert.Equal(t, []string{"a"}, nodeNames(cmd))
	assert.Equal(t, []disruption.Move{{Pod: "default/batch", To: "c"}}, cmd.Moves, "a drifted node with pods is simulated")
	assert.NoError(t, disruption.Validate(cmd, in))
}
