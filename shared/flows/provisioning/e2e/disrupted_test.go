package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// poolNode creates a Ready Node labelled for NodePool pool with the provider id of instance id (as
// either provisioner's Node carries), capacity and taints.
func poolNode(t *testing.T, cp *kubetest.ControlPlane, name, pool, id string, capacity corev1.ResourceList, taints ...corev1.Taint) string {
	t.Helper()
	kubetest.ReadyNode(t, cp.Client, name, capacity)
	patch := map[string]any{
		"metadata": map[string]any{"labels": map[string]string{scheduling.LabelNodePool: pool, scheduling.LabelNodeInitalized: "true",
			corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"}},
		"spec": map[string]any{"providerID": "aws:///us-east-1a/" + id, "taints": taints},
	}
	body, err := json.Marshal(patch)
	require.NoError(t, err)
	_, err = cp.Client.CoreV1().Nodes().Patch(context.Background(), name, types.StrategicMergePatchType, body, metav1.PatchOptions{})
	require.NoError(t, err)
	return name
}

// ownNode creates one of Nodewright's Nodes: poolNode in NodePool default, and its claim, registered and
// initialized, recording the provider id and the Node name.
func ownNode(t *testing.T, w awsWorld, cp *kubetest.ControlPlane, name, claim, id string) string {
	t.Helper()
	poolNode(t, cp, name, "default", id, nil)
	_, err := w.store.CreateClaim(context.Background(), state.Claim{Name: claim, NodePool: "default", NodeClass: "default",
		Lifecycle: state.Initialized, InstanceID: id, InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "on-demand",
		ProviderID: "aws:///us-east-1a/" + id, NodeName: name})
	require.NoError(t, err)
	return name
}

// runPods creates n running pods of one CPU bound to node (their ReplicaSet recreates them elsewhere).
func runPods(t *testing.T, cp *kubetest.ControlPlane, ns, node string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		_, err := cp.Client.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}},
			metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// taint puts karpenter.sh/disrupted:NoSchedule on node, as the interruption, consolidation and
// termination flows do, and as Karpenter does to its own Nodes.
func taint(t *testing.T, cp *kubetest.ControlPlane, node string) {
	t.Helper()
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	require.NoError(t, kube.NewActions(client).Taint(context.Background(), node, apis.DisruptedNoScheduleTaint))
}

// TestProvisionerReplacesADisruptedNode: the pods of one of Nodewright's Nodes tainted
// karpenter.sh/disrupted (an interruption being handled) are provisioned for while they still run
// there, and the Node itself is no capacity, so the replacement is launched before the drain.
func TestProvisionerReplacesADisruptedNode(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := ownNode(t, w, cp, "interrupted-"+ns, "default-int01", "i-0interrupted")
	runPods(t, cp, ns, node, 3)
	taint(t, cp, node)

	rep, err := newProvisioner(t, w, cp, ns).Run(ctx, "run-disrupted")
	require.NoError(t, err)
	assert.Equal(t, 3, rep.PendingPods, "the disrupted Node's pods are reschedulable")
	require.NotEmpty(t, rep.Claims, "replacement capacity, although the Node still has room for them")
	pods := 0
	for _, c := range rep.Claims {
		pods += c.Pods
	}
	assert.Equal(t, 3, pods)
}

// Karpenter taints the Nodes it disrupts karpenter.sh/disrupted too, and launches their replacements
// itself: a tainted Node no claim of Nodewright's stands for (even one labelled with Nodewright's pool
// name) makes the provisioner launch nothing. The old code launched a duplicate for its pods.
func TestProvisionerLeavesKarpentersDisruptionToKarpenter(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := poolNode(t, cp, "karpenters-"+ns, "default", "i-0karpenters", nil)
	runPods(t, cp, ns, node, 3)
	taint(t, cp, node)

	rep, err := newProvisioner(t, w, cp, ns).Run(ctx, "run-foreign-disruption")
	require.NoError(t, err)
	assert.Zero(t, rep.PendingPods, "Karpenter moves its Node's pods")
	assert.Empty(t, rep.Claims)
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Empty(t, claims)
	assert.Empty(t, w.claimedInstances(t), "nothing launched")
}
