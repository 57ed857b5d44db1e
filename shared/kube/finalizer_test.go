package kube

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/kubetest"
)

func TestRemoveFinalizerReleasesADeletingNode(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	const other = "example.com/keep"
	node := ns + "-final"
	_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
		Finalizers: []string{other, TerminationFinalizer}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		_ = c.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
	})
	require.NoError(t, c.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}), "kubectl delete node")
	a := NewActions(c)

	require.NoError(t, a.RemoveFinalizer(ctx, node, TerminationFinalizer))
	n := getNode(t, c, node)
	assert.Equal(t, []string{other}, n.Finalizers, "only our finalizer goes")
	assert.NotNil(t, n.DeletionTimestamp)

	require.NoError(t, a.RemoveFinalizer(ctx, node, TerminationFinalizer))
	assert.Equal(t, n.ResourceVersion, getNode(t, c, node).ResourceVersion, "a second removal writes nothing")

	require.NoError(t, a.RemoveFinalizer(ctx, node, other))
	require.Eventually(t, func() bool {
		_, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 10*time.Second, 50*time.Millisecond, "the deleting Node is gone once its last finalizer is")
	assert.NoError(t, a.RemoveFinalizer(ctx, node, TerminationFinalizer), "a Node that is gone needs nothing")
}
