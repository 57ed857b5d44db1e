package provisioning

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// gatheredPods answers a pod read only once its gate has gathered every read of the batch.
type gatheredPods struct {
	podsNow
	gate *gate
}

func (g *gatheredPods) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	leave, err := g.gate.pass(ctx)
	defer leave()
	if err != nil {
		return nil, err
	}
	return g.podsNow.Pod(ctx, ns, name)
}

// TestABatchReadsItsPodsAtOnce: whether a queue batch is already satisfied is decided by reading each pod
// it names; the reads go out together, not one round trip after another (ten sequential reads per batch
// held the queue consumer while a burst's next run waited). Fails on the sequential check: the first
// read waits for the others, which are never made.
func TestABatchReadsItsPodsAtOnce(t *testing.T) {
	cluster := &revisionCluster{rv: "120"}
	w := newTestProvisioner(t, cluster)
	names := []string{"web-0", "web-1", "web-2", "web-3", "web-4", "web-5", "web-6", "web-7", "web-8", "web-9"}
	pods := &gatheredPods{podsNow: podsNow{pods: map[string]*corev1.Pod{}}, gate: newGate(len(names))}
	for _, n := range names {
		pods.pods["shop/"+n] = pendingAt(n, "uid-"+n, 100)
	}
	w.p.cfg.LaunchMargin = 100 * time.Millisecond
	// A first run records the snapshot at 120 (no pod reader yet: judged by time).
	out := w.p.Handle(context.Background(), "run-1", triggerOf(t, podBatch(t, 1, names...)))
	require.NoError(t, out.Err)
	require.False(t, out.Unsatisfied)

	w.p.deps.Pods = pods
	before := cluster.runs()
	out = w.p.Handle(context.Background(), "run-2", triggerOf(t, podBatch(t, 1, names...)))
	assert.True(t, out.Coalesced, "every pod is marked at 100 and the last snapshot is at 120: no run")
	assert.Equal(t, before, cluster.runs())
	assert.Equal(t, len(names), pods.gate.maxInFlight(), "the ten reads were in flight together")
}
