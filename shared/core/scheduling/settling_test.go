package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// destinations returns, per pod name, where plan put it: an existing node's name, or "new".
func destinations(plan *scheduling.Plan) map[string]string {
	out := map[string]string{}
	for _, np := range plan.ExistingNodes {
		for _, p := range np.Pods {
			out[p.Name] = np.Name
		}
	}
	for _, cp := range plan.NewClaims {
		for _, p := range cp.Pods {
			out[p.Name] = "new"
		}
	}
	return out
}

// TestSettlingNodesTakeOnlyExemptPods: a settling node takes the job's exempt pods and none of the
// others, even when both are pods of one controller with one spec (one class without the rule);
// without Settling the node takes them all, and a plain Solve is unchanged.
func TestSettlingNodesTakeOnlyExemptPods(t *testing.T) {
	in := scheduling.Input{
		NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog(),
		Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "settling", CPU: "8", Memory: "32Gi",
			Labels: map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux", scheduling.LabelZone: Zones[0]}}), Initialized: true}},
	}
	moved := Pod(PodOptions{Name: "moved", Owner: "web", CPU: "1", Memory: "1Gi"})
	pending := Pod(PodOptions{Name: "pending", Owner: "web", CPU: "1", Memory: "1Gi"})
	pods := []*corev1.Pod{moved, pending}
	prepared := scheduling.Prepare(in)

	res := prepared.SolveAll([]scheduling.SolveJob{
		{Pods: pods, Settling: map[string]bool{"settling": true}, Exempt: map[*corev1.Pod]bool{pending: true}},
		{Pods: pods},
	})
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err)
	assert.Equal(t, map[string]string{"moved": "new", "pending": "settling"}, destinations(res[0].Plan))
	assert.Equal(t, map[string]string{"moved": "settling", "pending": "settling"}, destinations(res[1].Plan))

	plain, err := prepared.Solve(pods, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"moved": "settling", "pending": "settling"}, destinations(plain))
}

// TestASettlingNodeIsNamedWhenItRefusesAPod: a pod that fits only on a settling node and on no new
// node is unschedulable, and the reason names the node's consolidateAfter.
func TestASettlingNodeIsNamedWhenItRefusesAPod(t *testing.T) {
	in := scheduling.Input{
		NodePools: pools(NodePool("default")), InstanceTypes: SmallCatalog(),
		Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "settling", CPU: "8", Memory: "32Gi",
			Labels: map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux", scheduling.LabelZone: Zones[0], "tier": "gold"}}), Initialized: true}},
	}
	// Only the existing node has tier=gold: no NodePool offers it.
	pinned := Pod(PodOptions{Name: "pinned", Owner: "web", CPU: "1", Memory: "1Gi", NodeSelector: map[string]string{"tier": "gold"}})
	res := scheduling.Prepare(in).SolveAll([]scheduling.SolveJob{{Pods: []*corev1.Pod{pinned}, Settling: map[string]bool{"settling": true}}})
	require.NoError(t, res[0].Err)
	require.Len(t, res[0].Plan.Unschedulable, 1)
	assert.Contains(t, res[0].Plan.Unschedulable[0].Reason, "node settling: still inside its NodePool's consolidateAfter")
}
