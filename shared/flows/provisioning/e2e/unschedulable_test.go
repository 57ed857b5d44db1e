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

// TestProvisionerRecordsWhyAPodCannotBeProvisioned: a pod no instance type fits launches nothing, and the
// run stores a CannotProvision decision for it (state.RecordDecisions, a BatchWriteItem), which
// `nodewright explain` reads. Run with $NODEWRIGHT_AWS_CALLS, it is also the provisioner's recorded use
// of BatchWriteItem for infra's IAM proof.
func TestProvisionerRecordsWhyAPodCannotBeProvisioned(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := cp.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "huge"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5000")}}}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	awaitUnschedulable(t, cp.Client, ns, 1)

	rep, err := newProvisioner(t, w, cp, ns).Run(ctx, "run-unschedulable")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	require.Len(t, rep.Unschedulable, 1)
	assert.Empty(t, rep.Errors)

	decisions, err := w.store.Decisions(ctx, "pod/"+ns+"/huge", 10)
	require.NoError(t, err)
	require.Len(t, decisions, 1, "the decision record nodewright explain reads")
	assert.Equal(t, "CannotProvision", decisions[0].Kind)
	assert.Equal(t, "run-unschedulable", decisions[0].ID)
}
