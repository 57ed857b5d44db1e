package kube

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

var disruptedTaint = corev1.Taint{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}

func getNode(t *testing.T, c kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return n
}

func taintKeys(n *corev1.Node) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key+"="+t.Value+":"+string(t.Effect))
	}
	return out
}

func TestTaintAndUntaintAreIdempotent(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	node := kubetest.ReadyNode(t, c, ns+"-taint", nil)
	a := NewActions(c)

	require.NoError(t, a.Taint(ctx, node, disruptedTaint))
	first := getNode(t, c, node)
	assert.Equal(t, []string{"karpenter.sh/disrupted=:NoSchedule"}, taintKeys(first))

	require.NoError(t, a.Taint(ctx, node, disruptedTaint))
	assert.Equal(t, first.ResourceVersion, getNode(t, c, node).ResourceVersion, "a second taint writes nothing")

	withValue := disruptedTaint
	withValue.Value = "consolidation"
	require.NoError(t, a.Taint(ctx, node, withValue))
	assert.Equal(t, []string{"karpenter.sh/disrupted=consolidation:NoSchedule"}, taintKeys(getNode(t, c, node)),
		"same key and effect: the value is updated, not duplicated")

	noExecute := corev1.Taint{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoExecute}
	require.NoError(t, a.Taint(ctx, node, noExecute))
	assert.Len(t, getNode(t, c, node).Spec.Taints, 2, "another effect is another taint")

	require.NoError(t, a.Untaint(ctx, node, disruptedTaint))
	after := getNode(t, c, node)
	assert.Equal(t, []string{"karpenter.sh/disrupted=:NoExecute"}, taintKeys(after))
	require.NoError(t, a.Untaint(ctx, node, disruptedTaint))
	assert.Equal(t, after.ResourceVersion, getNode(t, c, node).ResourceVersion, "a second untaint writes nothing")

	require.NoError(t, a.Untaint(ctx, node, noExecute))
	assert.Empty(t, getNode(t, c, node).Spec.Taints)
	assert.NoError(t, a.Untaint(ctx, "no-such-node", disruptedTaint), "untainting a gone node is done")
	assert.True(t, IsNotFound(a.Taint(ctx, "no-such-node", disruptedTaint)))
}

// TestConcurrentTaintsAreAllKept races writers adding different taints; the resourceVersion in each patch
// makes losers re-read instead of overwriting.
func TestConcurrentTaintsAreAllKept(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	node := kubetest.ReadyNode(t, c, ns+"-race", nil)
	a := NewActions(c)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = a.Taint(context.Background(), node,
				corev1.Taint{Key: fmt.Sprintf("example.com/t%d", i), Effect: corev1.TaintEffectNoSchedule})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	assert.Len(t, getNode(t, c, node).Spec.Taints, len(errs))
}

func TestLabelAndCordon(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	node := kubetest.ReadyNode(t, c, ns+"-label", nil)
	a := NewActions(c)
	value := "karpenter"

	require.NoError(t, a.Label(ctx, node, map[string]*string{"node.kubernetes.io/exclude-from-external-load-balancers": &value}))
	n := getNode(t, c, node)
	assert.Equal(t, "karpenter", n.Labels["node.kubernetes.io/exclude-from-external-load-balancers"])
	require.NoError(t, a.Label(ctx, node, map[string]*string{"node.kubernetes.io/exclude-from-external-load-balancers": &value}))
	assert.Equal(t, n.ResourceVersion, getNode(t, c, node).ResourceVersion, "labels already set are not written")
	require.NoError(t, a.Label(ctx, node, map[string]*string{"node.kubernetes.io/exclude-from-external-load-balancers": nil}))
	assert.NotContains(t, getNode(t, c, node).Labels, "node.kubernetes.io/exclude-from-external-load-balancers")

	require.NoError(t, a.Cordon(ctx, node))
	n = getNode(t, c, node)
	assert.True(t, n.Spec.Unschedulable)
	require.NoError(t, a.Cordon(ctx, node))
	assert.Equal(t, n.ResourceVersion, getNode(t, c, node).ResourceVersion)
	require.NoError(t, a.Uncordon(ctx, node))
	assert.False(t, getNode(t, c, node).Spec.Unschedulable)
}

func TestAnnotate(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	node := kubetest.ReadyNode(t, c, ns+"-annotate", nil)
	a := NewActions(c)
	n := getNode(t, c, node)
	n.Annotations = map[string]string{"example.com/kept": "yes"}
	_, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)

	want := map[string]string{"example.com/owner": "ml-platform", "example.com/empty": ""}
	require.NoError(t, a.Annotate(ctx, node, want))
	n = getNode(t, c, node)
	assert.Equal(t, "ml-platform", n.Annotations["example.com/owner"])
	assert.Contains(t, n.Annotations, "example.com/empty", "an empty value is an annotation too")
	assert.Equal(t, "yes", n.Annotations["example.com/kept"], "other annotations are left alone")
	require.NoError(t, a.Annotate(ctx, node, want))
	assert.Equal(t, n.ResourceVersion, getNode(t, c, node).ResourceVersion, "annotations already set are not written")

	assert.True(t, IsNotFound(a.Annotate(ctx, "no-such-node", want)), "a missing Node is NotFound")
}

func TestDeletePodAndNode(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	node := kubetest.ReadyNode(t, c, ns+"-delete", nil)
	a := NewActions(c)

	graceful := createPod(t, c, ns, testPod("graceful", node, nil), corev1.PodRunning)
	grace := 7 * time.Second
	require.NoError(t, a.DeletePod(ctx, PodRef{Namespace: ns, Name: graceful.Name, UID: graceful.UID}, DeleteOptions{GracePeriod: &grace}))
	p, err := c.CoreV1().Pods(ns).Get(ctx, graceful.Name, metav1.GetOptions{})
	require.NoError(t, err, "a bound pod waits for its kubelet during the grace period")
	require.NotNil(t, p.DeletionGracePeriodSeconds)
	assert.Equal(t, int64(7), *p.DeletionGracePeriodSeconds)

	require.NoError(t, a.DeletePod(ctx, PodRef{Namespace: ns, Name: graceful.Name}, DeleteOptions{Force: true}))
	_, err = c.CoreV1().Pods(ns).Get(ctx, graceful.Name, metav1.GetOptions{})
	assert.True(t, IsNotFound(mapError(err)), "force deletion removes it at once")

	require.NoError(t, a.DeletePod(ctx, PodRef{Namespace: ns, Name: graceful.Name}, DeleteOptions{}), "gone is deleted")
	replaced := createPod(t, c, ns, testPod("replaced", node, nil), "")
	require.NoError(t, a.DeletePod(ctx, PodRef{Namespace: ns, Name: replaced.Name, UID: "another-uid"}, DeleteOptions{}),
		"another incarnation with the name counts as the old one gone")
	_, err = c.CoreV1().Pods(ns).Get(ctx, replaced.Name, metav1.GetOptions{})
	assert.NoError(t, err, "and is left alone")

	require.NoError(t, a.DeleteNode(ctx, node))
	_, err = c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	assert.True(t, IsNotFound(mapError(err)))
	assert.NoError(t, a.DeleteNode(ctx, node))
}

func TestForgetPodsDeletesOnlyThatNodesPods(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	gone := kubetest.ReadyNode(t, c, ns+"-gone", nil)
	other := kubetest.ReadyNode(t, c, ns+"-other", nil)
	a := NewActions(c)
	createPod(t, c, ns, testPod("a", gone, nil), corev1.PodRunning)
	createPod(t, c, ns, testPod("b", gone, nil), corev1.PodRunning)
	createPod(t, c, ns, testPod("keep", other, nil), corev1.PodRunning)

	n, err := a.ForgetPods(ctx, gone)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1, "deleted at once, without waiting for a kubelet")
	assert.Equal(t, "keep", pods.Items[0].Name)

	n, err = a.ForgetPods(ctx, gone)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left: idempotent")
}
