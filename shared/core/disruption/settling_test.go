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

// TestConsolidateAfterCountsFromInitialization: consolidateAfter counts from the node's
// initialization (or a later pod event), not from its launch, as Karpenter's Consolidatable
// condition does; launch stands in only when the initialization time is unknown.
func TestConsolidateAfterCountsFromInitialization(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	cases := []struct {
		name   string
		modify func(*disruption.Node)
		kept   string
	}{
		{
			name:   "initialized 2 minutes ago, launched an hour ago",
			modify: func(n *disruption.Node) { n.InitializedAt = now.Add(-2 * time.Minute) },
			kept:   "consolidatable at 2026-06-01T12:08:00Z",
		},
		{
			name:   "initialized 10 minutes ago",
			modify: func(n *disruption.Node) { n.InitializedAt = now.Add(-10 * time.Minute) },
		},
		{
			name: "a pod event after the initialization counts",
			modify: func(n *disruption.Node) {
				n.InitializedAt, n.LastPodEvent = now.Add(-time.Hour), now.Add(-3*time.Minute)
			},
			kept: "consolidatable at 2026-06-01T12:07:00Z",
		},
		{
			name: "a pod event before the initialization does not shorten the wait",
			modify: func(n *disruption.Node) {
				n.InitializedAt, n.LastPodEvent = now.Add(-4*time.Minute), now.Add(-20*time.Minute)
			},
			kept: "consolidatable at 2026-06-01T12:06:00Z",
		},
		{name: "initialization unknown: launch an hour ago counts", modify: func(n *disruption.Node) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := node(small, nodeSpec{"n", "default", "medium", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1")}})
			tc.modify(&n)
			res := disruption.Decide(disruption.Input{
				Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", consolidateAfter(dur(10*time.Minute)))},
				Nodes: []disruption.Node{bigUnmanaged("sink"), n},
			})
			if tc.kept == "" {
				require.Len(t, res.Commands, 1, "kept: %+v", res.Kept)
				assert.Equal(t, []string{"n"}, nodeNames(res.Commands[0]))
				return
			}
			assert.Empty(t, res.Commands)
			assert.Contains(t, keptReason(res, "n"), tc.kept)
		})
	}
}

// settlingCluster: n1 (a medium node, one 1-CPU pod, settled long ago) could move its pod onto
// dest, a large managed node with room whose claim initialized initializedAgo before now. The pool
// consolidates after 10 minutes.
func settlingCluster(initializedAgo time.Duration) disruption.Input {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	dest := node(small, nodeSpec{"dest", "default", "large", od, []*corev1.Pod{annotated(pod("db", "1"), disruption.AnnotationDoNotDisrupt, "true")}})
	dest.InitializedAt = now.Add(-initializedAgo)
	return disruption.Input{
		Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", consolidateAfter(dur(10*time.Minute)), onDemandOnly, amd64Only)},
		Nodes:     []disruption.Node{dest, node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("web", "1")}})},
	}
}

// TestSettlingNodesTakeNoCandidatePods: a node still inside its own consolidateAfter takes none of
// a consolidation candidate's pods (Karpenter's consolidation simulation skips it for them), so the
// candidate is replaced by a cheaper node instead of deleted onto it. Once its window is over it
// takes them again.
func TestSettlingNodesTakeNoCandidatePods(t *testing.T) {
	cmd := decideOne(t, settlingCluster(time.Hour))
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Equal(t, []disruption.Move{{Pod: "default/web", To: "dest"}}, cmd.Moves)

	cmd = decideOne(t, settlingCluster(2*time.Minute))
	assert.Equal(t, disruption.ReasonUnderutilized, cmd.Reason)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, cmd.Replacements, 1)
	assert.Equal(t, []disruption.Move{{Pod: "default/web", To: cmd.Replacements[0].Name}}, cmd.Moves)

	t.Run("a recent pod event makes a node settle again", func(t *testing.T) {
		in := settlingCluster(time.Hour)
		in.Nodes[0].LastPodEvent = now.Add(-time.Minute)
		cmd := decideOne(t, in)
		assert.Equal(t, disruption.ActionReplace, cmd.Action)
	})
	t.Run("consolidateAfter 0 has no window", func(t *testing.T) {
		in := settlingCluster(0)
		in.NodePools[0].ConsolidateAfter = dur(0)
		cmd := decideOne(t, in)
		assert.Equal(t, disruption.ActionDelete, cmd.Action)
	})
	t.Run("an unmanaged node never settles", func(t *testing.T) {
		in := settlingCluster(2 * time.Minute)
		in.Nodes[0] = bigUnmanaged("sink")
		in.Nodes[0].InitializedAt = now
		cmd := decideOne(t, in)
		assert.Equal(t, disruption.ActionDelete, cmd.Action)
		assert.Equal(t, []disruption.Move{{Pod: "default/web", To: "sink"}}, cmd.Moves)
	})
}

// TestSettlingNodesTakePendingPods: pending pods may still land on a settling node (Karpenter
// exempts them): here the pending pod fits only there, beside the candidate's pod going to a
// replacement, so the command needs one new node, not two.
func TestSettlingNodesTakePendingPods(t *testing.T) {
	in := settlingCluster(2 * time.Minute)
	in.PendingPods = []*corev1.Pod{pod("waiting", "3")}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Len(t, cmd.Replacements, 1)
	assert.Equal(t, []disruption.Move{{Pod: "default/web", To: cmd.Replacements[0].Name}}, cmd.Moves)
}

// TestDriftMovesPodsOntoSettlingNodes: drift is not consolidation; Karpenter's drift simulation does
// not hold settling nodes back, and neither does Nodewright's.
func TestDriftMovesPodsOntoSettlingNodes(t *testing.T) {
	in := settlingCluster(2 * time.Minute)
	in.Nodes[1] = drifted(in.Nodes[1], "AMIDrift")
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Equal(t, []disruption.Move{{Pod: "default/web", To: "dest"}}, cmd.Moves)
}

// TestValidateRefusesAMoveOntoANodeThatStartedSettling: a command decided while its destination had
// settled is invalid once a pod event makes the destination settle again before it executes.
func TestValidateRefusesAMoveOntoANodeThatStartedSettling(t *testing.T) {
	cmd := decideOne(t, settlingCluster(time.Hour))
	require.Equal(t, []disruption.Move{{Pod: "default/web", To: "dest"}}, cmd.Moves)
	require.NoError(t, disruption.Validate(cmd, settlingCluster(time.Hour)))
	fresh := settlingCluster(time.Hour)
	fresh.Nodes[0].LastPodEvent = now
	err := disruption.Validate(cmd, fresh)
	var ve *disruption.ValidationError
	require.True(t, errors.As(err, &ve), "got %v", err)
	assert.Equal(t, disruption.ValidationScheduling, ve.Kind)
}
