package provisioning

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// growingCluster is a burst in progress: each snapshot shows the pods of the next step (the last step
// once they run out).
type growingCluster struct {
	mu    sync.Mutex
	steps []*kube.Snapshot
	n     int
}

func (c *growingCluster) Snapshot(context.Context) (*kube.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.steps[min(c.n, len(c.steps)-1)]
	c.n++
	return s, nil
}

// TestARunThatLaunchedRunsAgain: kube-scheduler marks a burst's pods over seconds, and each pod's
// wake-up waits in the queue behind the burst's earlier ones. A run that launched therefore runs again
// at once, even though its own batch is satisfied, and serves the pods marked since its snapshot; the run
// that launches nothing ends the chain. Before, the second pod waited for its own message (in the
// detection scenario, seconds behind hundreds of messages already served).
func TestARunThatLaunchedRunsAgain(t *testing.T) {
	a, b := pod("a", nil), pod("b", nil)
	b.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3") // not beside a on its node
	cluster := &growingCluster{steps: []*kube.Snapshot{pendingSnapshot(a), pendingSnapshot(a, b)}}
	w := newTestProvisioner(t, cluster)
	out := w.p.Handle(context.Background(), "run-1", TriggerOf(batch(t, time.Now().Add(-time.Second))))
	require.NoError(t, out.Err)
	assert.False(t, out.Unsatisfied)
	require.Len(t, out.Launched, 2, "a claim for a, then one for b, which no message named: %+v", out)
	assert.Equal(t, 3, out.Runs, "the third run found both pods served by claims in flight and ended the chain")
	assert.Empty(t, out.Report.Claims)

	// Each run's timing is kept, in order, so the invocation's log line shows where the chain spent its time.
	require.Len(t, out.Timings, 3)
	for i, rt := range out.Timings {
		assert.True(t, rt.Lease, "run %d", i+1)
		assert.False(t, rt.Started.IsZero(), "run %d", i+1)
		assert.Equal(t, rt.Read+rt.Prepare+rt.Solve+rt.Launch+rt.Finish, rt.Total())
		if i > 0 {
			assert.False(t, rt.Started.Before(out.Timings[i-1].Started.Add(out.Timings[i-1].Total())), "run %d began after run %d ended", i+1, i)
		}
	}
	assert.Equal(t, []int{1, 1, 0}, []int{out.Timings[0].Launched, out.Timings[1].Launched, out.Timings[2].Launched})
	assert.Equal(t, []int{1, 2, 2}, []int{out.Timings[0].PendingPods, out.Timings[1].PendingPods, out.Timings[2].PendingPods})
}

// countingPods is podsNow that counts its reads.
type countingPods struct {
	podsNow
	mu    sync.Mutex
	reads int
}

func (p *countingPods) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	p.reads++
	p.mu.Unlock()
	return p.podsNow.Pod(ctx, ns, name)
}

// TestAChainedRunIsNotHeldUpByTheBatchsCheck: a run that launched is run again whatever its batch's check
// says, so the check (mark, revision, a read of each pod the batch names) waits for the run that ends the
// chain. Before, it was made after every run of a burst, and the next run's snapshot, which the pods
// marked meanwhile wait for, started only after it.
func TestAChainedRunIsNotHeldUpByTheBatchsCheck(t *testing.T) {
	a, b := pod("a", nil), pod("b", nil)
	a.Namespace, b.Namespace = "shop", "shop"
	b.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3") // not beside a on its node
	first, second := pendingSnapshot(a), pendingSnapshot(a, b)
	first.PodsResourceVersion, second.PodsResourceVersion = "100", "100"
	cluster := &growingCluster{steps: []*kube.Snapshot{first, second}}
	w := newTestProvisioner(t, cluster)
	pods := &countingPods{podsNow: podsNow{pods: map[string]*corev1.Pod{"shop/a": pendingAt("a", "uid-a", 50)}}}
	w.p.deps.Pods = pods

	out := w.p.Handle(context.Background(), "run-1", triggerOf(t, podBatch(t, 1, "a")))
	require.NoError(t, out.Err)
	assert.False(t, out.Unsatisfied, "the run that ended the chain saw pod a")
	require.Len(t, out.Launched, 2, "a claim for a, then one for b: %+v", out)
	assert.Equal(t, 3, out.Runs)
	assert.Equal(t, 1, pods.reads, "the pod is read once, after the run that launched nothing, not after each run that launched")
}
