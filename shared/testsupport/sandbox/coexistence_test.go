package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Karpenter's capacity beside Nodewright's: nothing of Karpenter's touched, nothing of Nodewright's that
// Karpenter would collect, a deleted Node drained and terminated, a Node deleted with its finalizer
// stripped ending with its instance terminated, a narrowed label launched once, and Karpenter's
// disruption of its own Node left to Karpenter.
func TestCoexistenceLeavesKarpenterAloneAndRemovesOnlyItsOwn(t *testing.T) {
	sb := start(t)
	rep, err := sb.Coexistence(context.Background(), CoexistenceOptions{ScaleUpOptions: ScaleUpOptions{Replicas: 6, Timeout: 2 * time.Minute}})
	require.NoError(t, err)
	t.Logf("report: %+v", rep)
	require.Len(t, rep.ForeignInstances, 3+2, "three, then the Node Karpenter disrupts and its replacement")
	assert.GreaterOrEqual(t, rep.ForeignPods, 3+2*rep.ForeignDisruptedPods,
		"Karpenter's app ran on its nodes, and the disrupted Node's pods on it and on its replacement")

	assert.Zero(t, rep.ForeignInstancesTerminated, "Karpenter's instances")
	assert.Zero(t, rep.ForeignNodesModified, "writes to Karpenter's Nodes: %v", rep.ForeignNodeWrites)
	assert.Zero(t, rep.ForeignPodsEvicted)
	assert.Zero(t, rep.OwnInstancesMatchingKarpenterDiscovery, "ours Karpenter's garbage collection lists: %v", rep.OwnInstancesMatching)
	assert.Zero(t, rep.OwnLaunchTemplatesMatchingKarpenterDiscovery)
	assert.GreaterOrEqual(t, rep.LifecycleSeconds, 120.0)
	assert.Positive(t, rep.LifecyclePasses)

	assert.True(t, rep.DeletedNodeInstanceTerminated, "kubectl delete node terminates the instance")
	assert.GreaterOrEqual(t, rep.DeletedNodeGoneAfterS, 0.0, "the deleted Node goes")
	assert.GreaterOrEqual(t, rep.DeletedNodePodsRescheduledAfterS, 0.0, "its pods run elsewhere")
	assert.Zero(t, rep.DeletedNodePodsLost)

	assert.True(t, rep.StrippedNodeInstanceTerminated, "a Node deleted with its finalizer stripped ends with its instance terminated: %s",
		rep.StrippedNodeClaim)
	assert.Equal(t, "deleted/node_lost", rep.StrippedNodeClaim, "through the termination flow")
	assert.Zero(t, rep.StrippedNodePodsLost)

	assert.Positive(t, rep.NarrowedLabelNodesNeeded)
	assert.GreaterOrEqual(t, rep.NarrowedProvisionerRuns, 5)
	assert.Equal(t, rep.NarrowedLabelNodesNeeded, rep.NarrowedLabelLaunches, "the narrowed label launches once")
	assert.Equal(t, rep.NarrowedPods, rep.NarrowedPodsRunning)

	assert.NotEmpty(t, rep.ForeignDisruptedNode)
	assert.Equal(t, 2, rep.ForeignDisruptedPods)
	assert.GreaterOrEqual(t, rep.ForeignDisruptionRuns, 5, "the provisioner ran while Karpenter's Node was tainted")
	assert.Zero(t, rep.ForeignDisruptionPodsSeen, "Karpenter's Node's pods are not Nodewright's to move")
	assert.Zero(t, rep.LaunchesForForeignDisruption, "Karpenter launches the replacement of its own Node")
	assert.GreaterOrEqual(t, rep.ForeignDisruptionPodsMovedAfterS, 0.0, "the pods run on Karpenter's replacement")
	assert.Zero(t, rep.ForeignDisruptionPodsLost)

	assert.Zero(t, rep.LeakedInstances)
	assert.Empty(t, rep.Leaks)
	assert.Zero(t, rep.PodsLost)
	assert.Empty(t, rep.Errors)
	for target, met := range rep.TargetsMet {
		assert.True(t, met, target)
	}
	if !rep.Worked() {
		dump(t, sb)
	}
}
