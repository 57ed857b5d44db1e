package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/apis"
	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/kubetest"
)

// TestProvisionerReplacesADisruptedNode: the pods of a Node tainted karpenter.sh/disrupted (an
// interruption being handled) are provisioned for while they still run there, and the Node itself is
// no capacity, so the replacement is launched before the drain.
func TestProvisionerReplacesADisruptedNode(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := kubetest.ReadyNode(t, cp.Client, "interrupted-"+ns, nil)
	for i := 0; i < 3; i++ {
		_, err := cp.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}},
			metav1.CreateOptions{})
		require.NoError(t, err)
	}
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	require.NoError(t, kube.NewActions(client).Taint(ctx, node, apis.DisruptedNoScheduleTaint))

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
