package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestReplacedClaimsNameTheDrainsWhosePodsTheClaimTakes(t *testing.T) {
	byNode := claimsByNode([]state.Claim{
		{Name: "old", Lifecycle: state.Draining, NodeName: "n-old"},
		{Name: "also-old", Lifecycle: state.Draining, NodeName: "n-also"},
		{Name: "healthy", Lifecycle: state.Initialized, NodeName: "n-healthy"},
		{Name: "gone", Lifecycle: state.Deleted, NodeName: "n-gone"},
	})
	disrupted := map[string]bool{"n-old": true, "n-also": true, "n-gone": true}
	cp := scheduling.ClaimPlan{Pods: []*corev1.Pod{boundTo("a", "n-old"), boundTo("b", "n-old"), boundTo("c", "n-also"),
		boundTo("d", "n-healthy"), boundTo("e", "n-gone"), boundTo("pending", "")}}
	assert.Equal(t, []string{"also-old", "old"}, replacedClaims(cp, disrupted, byNode))
	assert.Empty(t, replacedClaims(scheduling.ClaimPlan{Pods: []*corev1.Pod{boundTo("pending", "")}}, disrupted, byNode))
}

// A run that launches for the pods of a draining Node records the launch as that claim's replacement,
// so the drain waits for it (and only for it) before evicting.
func TestRunRecordsWhichDrainALaunchReplaces(t *testing.T) {
	bound := pod("moving", nil)
	bound.Status.Conditions = nil
	bound.Spec.NodeName = "n-old"
	bound.Status.Phase = corev1.PodRunning
	snap := &kube.Snapshot{Nodes: []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n-old",
		Labels: map[string]string{scheduling.LabelNodePool: "default"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}},
		Bound: []*corev1.Pod{&bound}}
	w := newTestProvisioner(t, fakeCluster{snap: snap})
	_, err := w.store.CreateClaim(context.Background(), state.Claim{Name: "old", NodePool: "default", Lifecycle: state.Draining,
		NodeName: "n-old"})
	require.NoError(t, err)

	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1, "errors: %v", rep.Errors)
	c, err := w.store.GetClaim(context.Background(), rep.Claims[0].Name)
	require.NoError(t, err)
	assert.Equal(t, []string{"old"}, c.Replaces)
}
