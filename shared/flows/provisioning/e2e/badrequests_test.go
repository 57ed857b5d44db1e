package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// TestProvisionerRefusesOverflowingRequests: the API server accepts a pod requesting cpu: 1e18, which
// does not fit the scheduler's millicores. The provisioner reports that pod unschedulable with the
// reason instead of reading the request as 0 and launching a node for it, and still provisions the
// ordinary pod beside it.
func TestProvisionerRefusesOverflowingRequests(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for name, cpu := range map[string]string{"huge": "1e18", "web": "1"} {
		_, err := cp.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}},
			metav1.CreateOptions{})
		require.NoError(t, err, "the API server accepts cpu %s", cpu)
	}
	awaitUnschedulable(t, cp.Client, ns, 2)

	rep, err := newProvisioner(t, w, cp, ns).Run(ctx, "run-overflowing-request")
	require.NoError(t, err)
	assert.Equal(t, 2, rep.PendingPods)
	require.Len(t, rep.Unschedulable, 1)
	assert.Equal(t, ns+"/huge", rep.Unschedulable[0].Pod)
	assert.Contains(t, rep.Unschedulable[0].Reason, "container app: resources.requests.cpu: 1e18 is too large")
	require.Len(t, rep.Claims, 1, "one node for the ordinary pod, none for the overflowing one")
	assert.Equal(t, 1, rep.Claims[0].Pods)
}
