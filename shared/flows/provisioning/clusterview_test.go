package provisioning

import (
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

func unschedulable(name string) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	return p
}

func TestClusterView(t *testing.T) {
	now := metav1.Now()
	snap := &kube.Snapshot{Nodes: []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "managed", Labels: map[string]string{scheduling.LabelNodePool: "default"}},
			Spec:   corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-1"},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ready", Labels: map[string]string{scheduling.LabelNodePool: "default", scheduling.LabelNodeInitalized: "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "leaving", DeletionTimestamp: &now}},
	}}
	bound := unschedulable("bound")
	bound.Spec.NodeName = "managed"
	waiting, gone, nominated, notTried := unschedulable("waiting"), unschedulable("gone"), unschedulable("nominated"), unschedulable("not-tried")
	gone.DeletionTimestamp = &now
	nominated.Status.NominatedNodeName = "ready"
	notTried.Status.Conditions = nil
	snap.Bound = []*corev1.Pod{&bound}
	snap.Pending = []*corev1.Pod{&waiting, &gone, &nominated, &notTried}

	nodes := existingNodes(snap, NewClaimIndex([]state.Claim{{Name: "default-a", ProviderID: "aws:///us-east-1a/i-1"}}))
	require.Len(t, nodes, 3)
	assert.Equal(t, []*corev1.Pod{&bound}, nodes[0].Pods)
	assert.Equal(t, "default", nodes[0].NodePool)
	assert.False(t, nodes[0].Initialized)
	assert.Empty(t, nodes[1].NodePool, "no claim stands for the Node: its label names another provisioner's pool")
	assert.True(t, nodes[1].Initialized)
	assert.True(t, nodes[2].Initialized, "a node Nodewright does not manage is initialized")

	assert.Equal(t, []*corev1.Pod{&waiting}, provisionablePods(snap))
	j := joined(snap)
	assert.Equal(t, map[string]bool{"aws:///us-east-1a/i-1": true}, j.byProviderID)
	assert.True(t, j.has(state.Claim{ProviderID: "aws:///us-east-1a/i-1"}))
	snap.Nodes[0].Status.Allocatable = nil
	assert.False(t, joined(snap).has(state.Claim{ProviderID: "aws:///us-east-1a/i-1"}),
		"a Node whose kubelet has not posted its allocatable cannot take pods yet: its claim stays in flight")
}

func TestRequestsRoundTrip(t *testing.T) {
	r := scheduling.Resources{CPU: 2500, Memory: 3 << 30, Pods: 4}
	m := requestStrings(r)
	assert.Equal(t, map[string]string{"cpu": "2500m", "memory": "3Gi", "pods": "4"}, m)
	assert.Equal(t, r, parseRequests(m))
	assert.Equal(t, scheduling.Resources{CPU: 1000}, parseRequests(map[string]string{"cpu": "1", "memory": "lots"}))
}
