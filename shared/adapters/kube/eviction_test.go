package kube

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// runningPod creates a pod bound to node and reports it Running and Ready, as a kubelet would.
func runningPod(t *testing.T, c kubernetes.Interface, ns, name, node string, labels map[string]string) *corev1.Pod {
	t.Helper()
	p := createPod(t, c, ns, testPod(name, node, labels), "")
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	p, err := c.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
	return p
}

func createPDB(t *testing.T, c kubernetes.Interface, ns, name string, minAvailable int32, labels map[string]string) {
	t.Helper()
	v := intstr.FromInt32(minAvailable)
	_, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(context.Background(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &v, Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func waitUntil(t *testing.T, timeout time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEvictionBlockedThenAllowedByPDB runs against kube-controller-manager's real PDB status. The first
// eviction is sent right after the budget is created, while the API server answers "still being
// processed" with Retry-After: 10, which client-go would otherwise retry for up to 100 s.
func TestEvictionBlockedThenAllowedByPDB(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{ControllerManager: true})
	ctx := context.Background()
	node := kubetest.ReadyNode(t, c, ns+"-evict", nil)
	web := map[string]string{"app": "web"}
	pod := runningPod(t, c, ns, "web", node, web)
	ref := PodRef{Namespace: ns, Name: pod.Name, UID: pod.UID}
	a := NewActions(c)

	createPDB(t, c, ns, "web", 1, web)
	start := time.Now()
	res, err := a.Evict(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, Blocked, res.Outcome)
	assert.Contains(t, res.Reason, "web")
	assert.Less(t, time.Since(start), 5*time.Second, "a refusal returns at once")

	waitUntil(t, time.Minute, "PDB status from kube-controller-manager", func() bool {
		p, err := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 1
	})
	start = time.Now()
	res, err = a.Evict(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, Blocked, res.Outcome)
	assert.Contains(t, res.Reason, "needs 1 healthy pods and has 1 currently")
	assert.Less(t, time.Since(start), 5*time.Second)

	_, err = c.PolicyV1().PodDisruptionBudgets(ns).Patch(ctx, "web", types.MergePatchType,
		[]byte(`{"spec":{"minAvailable":0}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	waitUntil(t, time.Minute, "the PDB to allow a disruption", func() bool {
		p, err := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == 1
	})
	res, err = a.Evict(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, Evicted, res.Outcome)
	p, err := c.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err == nil {
		assert.NotNil(t, p.DeletionTimestamp, "an evicted pod is being deleted")
	}

	require.NoError(t, a.DeletePod(ctx, ref, DeleteOptions{Force: true}))
	res, err = a.Evict(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, AlreadyGone, res.Outcome, "404")

	again := runningPod(t, c, ns, "web", node, nil)
	res, err = a.Evict(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, AlreadyGone, res.Outcome, "the name belongs to a new pod (UID precondition)")
	_, err = c.CoreV1().Pods(ns).Get(ctx, again.Name, metav1.GetOptions{})
	assert.NoError(t, err, "the new pod is not evicted")
}

func TestEvictionWithTwoPDBsIsMisconfigured(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{ControllerManager: true})
	node := kubetest.ReadyNode(t, c, ns+"-twopdb", nil)
	web := map[string]string{"app": "web"}
	pod := runningPod(t, c, ns, "web", node, web)
	createPDB(t, c, ns, "first", 0, web)
	createPDB(t, c, ns, "second", 0, web)

	res, err := NewActions(c).Evict(context.Background(), PodRef{Namespace: ns, Name: pod.Name})
	require.Error(t, err)
	assert.True(t, IsPDBMisconfigured(err), "%v", err)
	assert.False(t, IsUnavailable(err))
	assert.Empty(t, res.Outcome)
}

// TestEvictionDoesNotRetry429s answers every eviction with 429 and Retry-After: 10, the way the API server
// answers while a budget is being processed and when it throttles, and checks one request is made.
func TestEvictionDoesNotRetry429s(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		blocked bool
	}{
		{"budget still being processed", `{"kind":"Status","apiVersion":"v1","status":"Failure","code":429,
			"reason":"TooManyRequests","message":"Cannot evict pod as it would violate the pod's disruption budget.",
			"details":{"retryAfterSeconds":10,"causes":[{"reason":"DisruptionBudget",
			"message":"The disruption budget web is still being processed by the server."}]}}`, true},
		{"throttled", `{"kind":"Status","apiVersion":"v1","status":"Failure","code":429,
			"reason":"TooManyRequests","message":"Too many requests, please try again later.",
			"details":{"retryAfterSeconds":10}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				assert.Equal(t, "/api/v1/namespaces/ns/pods/web/eviction", r.URL.Path)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "10")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := NewClientset(&rest.Config{Host: srv.URL})
			require.NoError(t, err)

			start := time.Now()
			res, err := NewActions(c).Evict(context.Background(), PodRef{Namespace: "ns", Name: "web"})
			assert.Less(t, time.Since(start), 2*time.Second)
			assert.Equal(t, int32(1), calls.Load(), "exactly one request")
			if tc.blocked {
				require.NoError(t, err)
				assert.Equal(t, Blocked, res.Outcome)
				assert.Contains(t, res.Reason, "still being processed")
			} else {
				require.Error(t, err)
				assert.True(t, IsUnavailable(err), "%v", err)
			}
		})
	}
}
