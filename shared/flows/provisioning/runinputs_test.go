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
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// disruptionBetweenReads stands for a consolidation command executing while a provisioning run reads:
// its first claim list is answered before the command's records, and then the command executes as
// consolidation's execute does (its replacement claim recorded, then the Node tainted) before the
// cluster is read. The snapshot waits for that first claim list, so the run sees the taint whatever
// order it reads in.
type disruptionBetweenReads struct {
	Store
	once     sync.Once
	executed chan struct{}
	execute  func()
}

func (d *disruptionBetweenReads) ListClaims(ctx context.Context) ([]state.Claim, error) {
	claims, err := d.Store.ListClaims(ctx)
	d.once.Do(func() {
		d.execute()
		close(d.executed)
	})
	return claims, err
}

// clusterAfter is the cluster as it is once executed is closed.
type clusterAfter struct {
	executed <-chan struct{}
	snap     func() *kube.Snapshot
}

func (c clusterAfter) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	select {
	case <-c.executed:
		return c.snap(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// A replacement recorded by the disruption function absorbs the pods of the Node it replaces, even when
// the run's claim list was read before the replacement was recorded and its snapshot after the Node was
// tainted. The old code read the two at once and launched a second replacement.
func TestRunSeesTheReplacementOfEveryDisruptedNodeItSees(t *testing.T) {
	var tainted bool
	var mu sync.Mutex
	snap := func() *kube.Snapshot {
		mu.Lock()
		defer mu.Unlock()
		var taints []corev1.Taint
		if tainted {
			taints = []corev1.Taint{apis.DisruptedNoScheduleTaint}
		}
		return &kube.Snapshot{Nodes: []corev1.Node{readyNode("old", "default", "i-old", "4", "4", taints...)},
			Bound: []*corev1.Pod{runningOn("a", "old"), runningOn("b", "old")}}
	}
	executed := make(chan struct{})
	w := newTestProvisioner(t, clusterAfter{executed: executed, snap: snap})
	ctx := context.Background()
	_, err := w.store.CreateClaim(ctx, initializedClaim("default-old01", "i-old", "old"))
	require.NoError(t, err)
	race := &disruptionBetweenReads{Store: w.store, executed: executed, execute: func() {
		_, err := w.store.CreateClaim(ctx, state.Claim{Name: "default-new01", NodePool: "default", NodeClass: "default",
			InstanceTypes: []string{"m5.xlarge"}, Requests: map[string]string{"cpu": "2"}, Replaces: []string{"default-old01"}})
		assert.NoError(t, err)
		mu.Lock()
		tainted = true
		mu.Unlock()
	}}
	w.p.deps.Store = race

	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 2, rep.PendingPods, "the tainted Node's pods need a new place")
	assert.Equal(t, 1, rep.InFlight, "the replacement the disruption recorded")
	assert.Empty(t, rep.Claims, "the replacement in flight takes the pods: no second launch")
	assert.Empty(t, w.ec2.requests)
}

// deadlineCluster records the deadline of the context its snapshot is read under.
type deadlineCluster struct {
	revisionCluster
	deadline time.Time
}

func (c *deadlineCluster) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	c.deadline, _ = ctx.Deadline()
	return c.revisionCluster.Snapshot(ctx)
}

// TestTheReadsEndBeforeTheInvocationsDeadline: at 150,000 pods on the scale harness the cold read ran
// into the 60 s deadline and the run ended 10 s past it (Lambda would have stopped it there, its FIFO
// batch invisible for minutes). The reads now end ReadReserve before the deadline.
func TestTheReadsEndBeforeTheInvocationsDeadline(t *testing.T) {
	cluster := &deadlineCluster{revisionCluster: revisionCluster{rv: "90"}}
	w := newTestProvisioner(t, cluster)
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	_, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.False(t, cluster.deadline.IsZero(), "the snapshot is read under a deadline")
	assert.False(t, cluster.deadline.After(deadline.Add(-ReadReserve)), "read by %s, the invocation ends at %s", cluster.deadline, deadline)
}
