package provisioning

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

var capacityAt = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func capacityNode(name, pool, providerID string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{scheduling.LabelNodePool: pool}},
		Spec: corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3920m"), corev1.ResourceMemory: resource.MustParse("15Gi")},
		}}
}

// capacityPod is a pod bound to node requesting cpu, created at created and Ready at ready (zero: not Ready).
func capacityPod(name, node, cpu string, phase corev1.PodPhase, created, ready time.Time, owner string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: phase}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: owner, Name: "x"}}
	}
	if !ready.IsZero() {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)}}
	}
	return p
}

func capacitySnapshot() (*kube.Snapshot, ClaimIndex) {
	deleting := capacityNode("ours-deleting", "default", "aws:///us-east-1a/i-3")
	deleting.DeletionTimestamp = &metav1.Time{Time: capacityAt}
	snap := &kube.Snapshot{
		Nodes: []corev1.Node{capacityNode("ours-1", "default", "aws:///us-east-1a/i-1"), capacityNode("ours-2", "default", "aws:///us-east-1b/i-2"),
			deleting, capacityNode("karpenters", "default", "aws:///us-east-1a/i-9")},
		Bound: []*corev1.Pod{
			capacityPod("app-new", "ours-1", "1", corev1.PodRunning, capacityAt.Add(-50*time.Second), capacityAt.Add(-20*time.Second), "ReplicaSet"),
			capacityPod("app-old", "ours-2", "500m", corev1.PodRunning, capacityAt.Add(-time.Hour), capacityAt.Add(-50*time.Minute), ""),
			capacityPod("starting", "ours-2", "250m", corev1.PodPending, capacityAt.Add(-5*time.Second), time.Time{}, ""),
			capacityPod("agent", "ours-1", "100m", corev1.PodRunning, capacityAt.Add(-2*time.Minute), capacityAt.Add(-30*time.Second), "DaemonSet"),
			capacityPod("elsewhere", "karpenters", "2", corev1.PodRunning, capacityAt.Add(-50*time.Second), capacityAt.Add(-10*time.Second), ""),
		},
	}
	claims := NewClaimIndex([]state.Claim{
		{Name: "c1", NodePool: "default", Lifecycle: state.Initialized, ProviderID: "aws:///us-east-1a/i-1", NodeName: "ours-1"},
		{Name: "c2", NodePool: "default", Lifecycle: state.Initialized, ProviderID: "aws:///us-east-1b/i-2", NodeName: "ours-2"},
		{Name: "c3", NodePool: "default", Lifecycle: state.Draining, ProviderID: "aws:///us-east-1a/i-3", NodeName: "ours-deleting"},
	})
	return snap, claims
}

func TestCapacityOfSumsNodewrightsNodesAndTheirPods(t *testing.T) {
	snap, claims := capacitySnapshot()
	c := CapacityOf(snap, claims, capacityAt.Add(-time.Minute), capacityAt)
	require.Len(t, c.Pools, 1, "Karpenter's Node and a Node being deleted are not summed")
	p := c.Pools[0]
	assert.Equal(t, "default", p.NodePool)
	assert.Equal(t, 2, p.Nodes)
	assert.EqualValues(t, 7_840, p.Allocatable.CPU)
	assert.EqualValues(t, 30<<30, p.Allocatable.Memory)
	assert.EqualValues(t, 160, p.Overhead.CPU)
	assert.EqualValues(t, 2<<30, p.Overhead.Memory)
	assert.EqualValues(t, 1_850, p.PodRequests.CPU, "every pod on the pool's Nodes, the DaemonSet's included")
	assert.EqualValues(t, 100, p.DaemonRequests.CPU)
	assert.Equal(t, map[corev1.PodPhase]int{corev1.PodRunning: 3, corev1.PodPending: 1}, p.Pods)
	assert.ElementsMatch(t, []time.Duration{30 * time.Second, 90 * time.Second}, c.Startup,
		"the pods on Nodewright's Nodes that became Ready in the window, from creation to Ready")

	none := CapacityOf(&kube.Snapshot{Nodes: []corev1.Node{capacityNode("karpenters", "default", "aws:///x/i-9")}}, NewClaimIndex(nil), capacityAt.Add(-time.Minute), capacityAt)
	assert.Empty(t, none.Pools, "a cluster without Nodewright Nodes reports no capacity")
}

func TestCapacityIsSummedOncePerIntervalAcrossProcesses(t *testing.T) {
	store := newStateStore(t)
	now := capacityAt
	clock := func() time.Time { return now }
	first := New(Config{}, Dependencies{Store: store, Now: clock})
	second := New(Config{}, Dependencies{Store: store, Now: clock})
	snap, claims := capacitySnapshot()
	ctx := context.Background()

	var rep Report
	first.noteCapacity(ctx, now, snap, claims, &rep)
	require.NotNil(t, rep.Capacity, "the first run ever reports")
	assert.Empty(t, rep.Capacity.Startup, "without a mark there is no window yet: nothing is counted twice")
	assert.Empty(t, rep.Errors)

	rep = Report{}
	second.noteCapacity(ctx, now.Add(10*time.Second), snap, claims, &rep)
	assert.Nil(t, rep.Capacity, "another process reported ten seconds ago (the mark says so)")

	snap.Bound = append(snap.Bound, capacityPod("later", "ours-1", "1", corev1.PodRunning, now.Add(5*time.Second), now.Add(25*time.Second), ""),
		capacityPod("after", "ours-1", "1", corev1.PodRunning, now.Add(5*time.Second), now.Add(time.Hour), ""))
	rep = Report{}
	second.noteCapacity(ctx, now.Add(CapacityEvery), snap, claims, &rep)
	require.NotNil(t, rep.Capacity)
	assert.Equal(t, []time.Duration{20 * time.Second}, rep.Capacity.Startup, "only pods Ready after the last report, up to the snapshot")

	rep = Report{}
	first.noteCapacity(ctx, now.Add(CapacityEvery+time.Second), snap, claims, &rep)
	assert.Nil(t, rep.Capacity, "its own last report is old, but the mark is not")
}
