package kube

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

func TestFinalizerHoldsADeletedNodeUntilRemoved(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	node := kubetest.ReadyNode(t, c, ns+"-finalizer", nil)
	a := NewActions(c)

	require.NoError(t, a.AddFinalizer(ctx, node, TerminationFinalizer))
	require.NoError(t, a.AddFinalizer(ctx, node, TerminationFinalizer), "adding it twice writes nothing more")
	assert.Equal(t, []string{TerminationFinalizer}, getNode(t, c, node).Finalizers)

	require.NoError(t, c.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}), "kubectl delete node")
	held := getNode(t, c, node)
	require.NotNil(t, held.DeletionTimestamp, "the finalizer keeps the deleted Node until the drain is done")
	require.NoError(t, a.AddFinalizer(ctx, node, "example.com/other"), "a deleting Node takes no new finalizer; not an error")
	assert.Equal(t, []string{TerminationFinalizer}, getNode(t, c, node).Finalizers)

	require.NoError(t, a.RemoveFinalizer(ctx, node, TerminationFinalizer))
	_, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	assert.True(t, IsNotFound(mapError(err)), "without the finalizer the deleted Node goes")
	assert.NoError(t, a.RemoveFinalizer(ctx, node, TerminationFinalizer), "a Node that is gone has no finalizer to remove")
}
