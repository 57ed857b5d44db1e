package disruption_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/nodewright/nodewright/shared/disruption"
	"github.com/nodewright/nodewright/shared/scheduling"
	"github.com/nodewright/nodewright/shared/scheduling/schedulingtest"
)

// TestDeterministic decides on a fragmented cluster (with pending pods, PDBs, a second pool and
// nodes kept for several reasons) and on shuffled copies of it: the results are identical.
func TestDeterministic(t *testing.T) {
	in := fragmented(40, 20, 0.6, 7)
	in.NodePools = append(in.NodePools, pool("arm", budgets(disruption.Budget{Nodes: "2"}),
		func(p *disruption.NodePool) {
			schedulingtest.Requirement(scheduling.LabelArch, scheduling.OpIn, "arm64")(&p.Scheduling)
		}))
	in.PendingPods = []*corev1.Pod{pod("pending-a", "500m"), pod("pending-b", "250m"), pod("pending-c", "1")}
	in.PDBs = []*policyv1.PodDisruptionBudget{pdb("app-03", "app-03", 0), pdb("app-07", "app-07", 1), pdb("app-07b", "app-07", 1)}
	in.Nodes[3].Disrupting = true
	in.Nodes[5].Initialized = false
	in.Nodes[8].Node.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}

	want := disruption.Decide(in)
	require.Len(t, want.Commands, 1, "the fixture must make a decision for the comparison to mean something")
	assert.NotEmpty(t, want.Kept)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	for seed := range uint64(5) {
		got := disruption.Decide(shuffled(in, seed+100))
		gotJSON, err := json.Marshal(got)
		require.NoError(t, err)
		assert.JSONEq(t, string(wantJSON), string(gotJSON), "shuffle seed %d", seed)
	}
}

// TestInputNotModified: Decide leaves its input as it found it.
func TestInputNotModified(t *testing.T) {
	in := fragmented(20, 10, 0.6, 3)
	in.PendingPods = []*corev1.Pod{pod("pending", "1")}
	before, err := json.Marshal([]any{in.Nodes, in.PendingPods, in.NodePools})
	require.NoError(t, err)
	disruption.Decide(in)
	after, err := json.Marshal([]any{in.Nodes, in.PendingPods, in.NodePools})
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after))
}
