package provisioning

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// stepClock is a test clock that only moves when told.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// slowCluster is a revisionCluster whose every read takes took on the test's clock: the run's duration,
// as a large cluster's reads make it.
type slowCluster struct {
	revisionCluster
	clock *stepClock
	took  time.Duration
}

func (c *slowCluster) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	c.clock.advance(c.took)
	return c.revisionCluster.Snapshot(ctx)
}

// TestARerunStartsOnlyIfThePreviousRunsDurationFits: a run that took 25 s leaves 35 s of a 60 s
// invocation; a fixed 20 s margin started another, to be cut off by the deadline. Handle now starts one
// only if the time left covers the measured run with headroom (37.5 s), and does when runs are quick.
func TestARerunStartsOnlyIfThePreviousRunsDurationFits(t *testing.T) {
	start := time.Now() // the context's own timer must not fire during the test
	clock := &stepClock{t: start}
	cluster := &slowCluster{revisionCluster: revisionCluster{rv: "90"}, clock: clock, took: 25 * time.Second}
	w := newTestProvisioner(t, cluster)
	w.p.deps.Now = clock.Now
	w.p.deps.Pods = &podsNow{pods: map[string]*corev1.Pod{"shop/web-0": pendingAt("web-0", "uid-web-0", 100)}}
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(60*time.Second))
	defer cancel()

	out := w.p.Handle(ctx, "run-1", triggerOf(t, podBatch(t, 1, "web-0")))
	require.NoError(t, out.Err)
	assert.True(t, out.Unsatisfied, "no snapshot reached the pod")
	assert.Equal(t, 1, out.Runs, "35 s left does not cover a 25 s run with headroom")
	last, ok := w.p.runs.Last()
	require.True(t, ok)
	assert.Equal(t, 25*time.Second, last, "the run's duration was measured")

	cluster.took = 5 * time.Second
	clock.t = start
	out = w.p.Handle(ctx, "run-2", triggerOf(t, podBatch(t, 1, "web-0")))
	assert.True(t, out.Unsatisfied)
	// The first run (25 s measured before, 5 s now) leaves 55 s; each later 5 s run needs the floor,
	// LaunchMargin (20 s): runs end at 5, 10, 15, 20, 25 s: MaxRunsPerBatch.
	assert.Equal(t, MaxRunsPerBatch, out.Runs, "quick runs are run again while they fit")

}

// TestAColdProcessAssumesTheConservativeEstimate: a process that has measured no run (the lease was held
// elsewhere) starts another only with ColdRunEstimate and headroom (45 s) left.
func TestAColdProcessAssumesTheConservativeEstimate(t *testing.T) {
	start := time.Now()
	clock := &stepClock{t: start.Add(20 * time.Second)}
	w := newTestProvisioner(t, &revisionCluster{rv: "90"})
	w.p.deps.Now = clock.Now
	_, err := w.store.AcquireLease(context.Background(), LeaseName, "another-invocation", time.Minute)
	require.NoError(t, err)
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(60*time.Second))
	defer cancel()

	out := w.p.Handle(ctx, "run-1", triggerOf(t, podBatch(t, 1, "web-0")))
	assert.False(t, out.Report.Lease)
	assert.Equal(t, 1, out.Runs, "40 s left, less than a cold run's 45 s")
	_, measured := w.p.runs.Last()
	assert.False(t, measured, "a run that did not hold the lease measures nothing")
}
