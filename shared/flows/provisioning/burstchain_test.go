package provisioning

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
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

// handleBurst handles one batch while a burst arrives: each snapshot shows one pod more than the last,
// steps pods in all, each requesting cpu.
func handleBurst(t *testing.T, steps int, cpu string) Outcome {
	t.Helper()
	var pods []corev1.Pod
	var snaps []*kube.Snapshot
	for i := range steps {
		p := pod(fmt.Sprintf("p%d", i), nil)
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
		pods = append(pods, p)
		snaps = append(snaps, pendingSnapshot(pods...))
	}
	w := newTestProvisioner(t, &growingCluster{steps: snaps})
	return w.p.Handle(context.Background(), "run-1", TriggerOf(batch(t, time.Now().Add(-time.Second))))
}

// TestALongBurstKeepsItsChain: kube-scheduler marks a thousand pods over ten to fifteen seconds, so a
// burst's chain runs more than MaxRunsPerBatch times. A run that launched does not count against that
// bound; before, the chain ended after the fifth run and the pods marked since waited seconds for the next
// queue batch and its quiet period (a 3.7 s gap in the detection scenario).
func TestALongBurstKeepsItsChain(t *testing.T) {
	const steps = MaxRunsPerBatch + 3
	out := handleBurst(t, steps, "3") // one pod per node
	require.NoError(t, out.Err)
	assert.False(t, out.Unsatisfied)
	assert.Len(t, out.Launched, steps, "a claim for each pod, as it came")
	assert.Equal(t, steps+1, out.Runs, "every run that launched was followed by another; the one that launched nothing ended the chain")
}

// TestAChainGoesOnWhileNewPodsArePlaced: pods marked since the last snapshot that fit on capacity in
// flight launch nothing, but the burst is still arriving; the chain goes on, and ends at the run that
// finds nothing new. Before, the run that launched nothing ended it, and the pods marked after it waited
// for their own messages behind the burst's backlog in the queue.
func TestAChainGoesOnWhileNewPodsArePlaced(t *testing.T) {
	a, b, c := pod("a", nil), pod("b", nil), pod("c", nil)
	cluster := &growingCluster{steps: []*kube.Snapshot{pendingSnapshot(a), pendingSnapshot(a, b), pendingSnapshot(a, b, c), pendingSnapshot(a, b, c)}}
	w := newTestProvisioner(t, cluster)
	out := w.p.Handle(context.Background(), "run-1", TriggerOf(batch(t, time.Now().Add(-time.Second))))
	require.NoError(t, out.Err)
	require.Len(t, out.Launched, 1, "one claim for a, with room for b and c")
	require.Len(t, out.Timings, 4, "b and c were placed on the claim in flight by runs of their own; the fourth found nothing new")
	assert.Equal(t, []int{1, 1, 1, 0}, []int{out.Timings[0].NewlyPlaced, out.Timings[1].NewlyPlaced, out.Timings[2].NewlyPlaced, out.Timings[3].NewlyPlaced})
}

// TestPlacingRunsDoNotEndTheChain: a burst whose new pods keep fitting on the claim in flight runs more
// than MaxRunsPerBatch runs that launch nothing; they show the burst going on, so they do not count
// against that bound. Before, the sixth run's pods waited for their own messages.
func TestPlacingRunsDoNotEndTheChain(t *testing.T) {
	const steps = MaxRunsPerBatch + 3
	out := handleBurst(t, steps, "50m")
	require.NoError(t, out.Err)
	assert.False(t, out.Unsatisfied)
	require.Len(t, out.Launched, 1, "one claim, with room for every pod that came after")
	assert.Equal(t, steps+1, out.Runs, "a run for each new pod, and one that found nothing new")
}

// leaseCounting is a Store that counts the lease's acquisitions and releases.
type leaseCounting struct {
	Store
	mu                 sync.Mutex
	acquired, released int
}

func (l *leaseCounting) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (state.Lease, error) {
	l.mu.Lock()
	l.acquired++
	l.mu.Unlock()
	return l.Store.AcquireLease(ctx, name, holder, ttl)
}

func (l *leaseCounting) ReleaseLease(ctx context.Context, lease state.Lease) error {
	l.mu.Lock()
	l.released++
	l.mu.Unlock()
	return l.Store.ReleaseLease(ctx, lease)
}

// TestAChainHoldsTheLeaseOnce: the runs of a burst's chain follow one another under one hold of the
// lease. Before, each run took the lease and gave it back, two table writes between one run's end and
// the next run's snapshot, which the pods marked meanwhile wait for. The lease is free at the end.
func TestAChainHoldsTheLeaseOnce(t *testing.T) {
	a, b := pod("a", nil), pod("b", nil)
	b.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("3")
	w := newTestProvisioner(t, &growingCluster{steps: []*kube.Snapshot{pendingSnapshot(a), pendingSnapshot(a, b)}})
	counting := &leaseCounting{Store: w.p.deps.Store}
	w.p.deps.Store = counting
	out := w.p.Handle(context.Background(), "run-1", TriggerOf(batch(t, time.Now().Add(-time.Second))))
	require.NoError(t, out.Err)
	assert.Equal(t, 3, out.Runs)
	assert.Equal(t, 1, counting.acquired, "three runs, one hold")
	assert.Equal(t, 1, counting.released)
	assert.True(t, leaseFree(t, w.store))

	// A hold ends at half the lease's time to live, so a chain never outlives its lease: with a lease of
	// a few milliseconds, each run takes it again.
	w2 := newTestProvisioner(t, &growingCluster{steps: []*kube.Snapshot{pendingSnapshot(a), pendingSnapshot(a, b)}})
	counting2 := &leaseCounting{Store: w2.p.deps.Store}
	w2.p.deps.Store = counting2
	w2.p.cfg.LeaseTTL = 2 * time.Millisecond
	out = w2.p.Handle(context.Background(), "run-2", TriggerOf(batch(t, time.Now().Add(-time.Second))))
	require.NoError(t, out.Err)
	assert.Equal(t, 3, out.Runs)
	assert.Len(t, out.Launched, 2)
	assert.Equal(t, 3, counting2.acquired, "one hold a run")
	assert.Equal(t, 3, counting2.released)
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
