package kubetest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestEvictionRefusedByPDBThenAllowed runs the whole chain the termination path relies on, for real:
// kube-scheduler binds a pod, kube-controller-manager computes PDB status, and the Eviction API refuses
// (429) while the budget allows no disruption and accepts once it does.
func TestEvictionRefusedByPDBThenAllowed(t *testing.T) {
	cp := Shared(t, Options{Scheduler: true, ControllerManager: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := cp.Client
	ns := cp.Namespace(t)

	node := ReadyNode(t, c, "eviction-node", nil)
	pod, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	pod = waitFor(t, ctx, "pod bound by kube-scheduler", func() (*corev1.Pod, bool) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return p, err == nil && p.Spec.NodeName != ""
	})
	assert.Equal(t, node, pod.Spec.NodeName)

	// No kubelet runs: report the pod Running and Ready as one would.
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)

	one := intstr.FromInt32(1)
	pdb, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	waitPDB(t, ctx, c, ns, pdb.Name, 0)

	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns}}
	err = c.PolicyV1().Evictions(ns).Evict(ctx, eviction)
	require.Error(t, err, "eviction must be refused while the PDB allows no disruption")
	assert.True(t, apierrors.IsTooManyRequests(err), "want 429 TooManyRequests, got %v", err)

	_, err = c.PolicyV1().PodDisruptionBudgets(ns).Patch(ctx, pdb.Name, types.MergePatchType,
		[]byte(`{"spec":{"minAvailable":0}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	waitPDB(t, ctx, c, ns, pdb.Name, 1)

	require.NoError(t, c.PolicyV1().Evictions(ns).Evict(ctx, eviction))
	p, err := c.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err == nil {
		assert.NotNil(t, p.DeletionTimestamp, "an evicted pod is being deleted")
	} else {
		assert.True(t, apierrors.IsNotFound(err), "unexpected error: %v", err)
	}
}

func TestNamespaceIsFreshAndNamedForTheTest(t *testing.T) {
	cp := Shared(t, Options{})
	ns := cp.Namespace(t)
	assert.Regexp(t, `^testnamespaceisfreshandnamedforthetest-[a-z0-9]+$`, ns)
	got, err := cp.Client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, corev1.NamespaceActive, got.Status.Phase)
}

func waitPDB(t *testing.T, ctx context.Context, c kubernetes.Interface, ns, name string, allowed int32) {
	t.Helper()
	waitFor(t, ctx, "PDB status from kube-controller-manager", func() (*policyv1.PodDisruptionBudget, bool) {
		p, err := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		return p, err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == allowed
	})
}

func waitFor[T any](t *testing.T, ctx context.Context, what string, check func() (T, bool)) T {
	t.Helper()
	for {
		v, ok := check()
		if ok {
			return v
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %v", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
