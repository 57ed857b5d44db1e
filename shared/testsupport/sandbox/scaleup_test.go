package sandbox

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// start brings up a sandbox for one test; without its real components the test fails under CI=true.
func start(t *testing.T) *Sandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := testWriter{t}
	sb, err := Start(ctx, Options{Out: out, BootDelay: time.Second, LifecycleEvery: time.Second})
	if err != nil {
		testenv.Unavailable(t, "the sandbox (moto and the local control plane)", err)
	}
	t.Cleanup(sb.Close)
	return sb
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

// dump logs the cluster's Nodes and the scenario's pods, for a failed scenario.
func dump(t *testing.T, sb *Sandbox) {
	ctx := context.Background()
	nodes, err := sb.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, n := range nodes.Items {
		t.Logf("node %s labels=%v taints=%v unschedulable=%v", n.Name, n.Labels, n.Spec.Taints, n.Spec.Unschedulable)
	}
	pods, err := sb.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range pods.Items {
		t.Logf("pod %s/%s node=%q phase=%s conditions=%v", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
	}
	claims, err := sb.Store.ListClaims(ctx)
	require.NoError(t, err)
	for _, c := range claims {
		t.Logf("claim %s %s instance=%s node=%s", c.Name, c.Lifecycle, c.InstanceID, c.NodeName)
	}
}

func TestScaleUpBindsEveryPodWithoutLeaks(t *testing.T) {
	sb := start(t)
	rep, err := sb.ScaleUp(context.Background(), ScaleUpOptions{Replicas: 6, Timeout: 2 * time.Minute})
	require.NoError(t, err)
	t.Logf("report: %+v", rep)
	if !assert.Equal(t, 6, rep.PodsBound, "every pod bound") || os.Getenv("SANDBOX_DUMP") != "" {
		dump(t, sb)
	}
	assert.Equal(t, 6, rep.PodsRunning)
	assert.Positive(t, rep.Nodes)
	assert.Zero(t, rep.LeakedInstances)
	assert.Empty(t, rep.Leaks)
	assert.Empty(t, rep.Errors)
	assert.Positive(t, rep.PendingToLaunchSeconds.N)
	assert.Positive(t, rep.WebhookRequests)
	assert.Positive(t, rep.TotalPricePerHour)
}
