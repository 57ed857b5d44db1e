package provisioning

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// panickingResolver panics while the run resolves an EC2NodeClass, as a nil map or slice bug would.
type panickingResolver struct{}

func (panickingResolver) Resolve(context.Context, *apis.EC2NodeClass, string) (nodeclass.Resolution, error) {
	panic("resolve: index out of range")
}

// panickingLauncher panics inside a launch goroutine.
type panickingLauncher struct{}

func (panickingLauncher) Launch(context.Context, instance.Request) (instance.Instance, error) {
	panic("launch: nil pointer dereference")
}

// panickingCluster panics while the run reads the cluster, on one of the read phase's goroutines.
type panickingCluster struct{}

func (panickingCluster) Snapshot(context.Context) (*kube.Snapshot, error) {
	panic("snapshot: nil map")
}

// TestAPanicInARunReleasesTheLeaseAtOnce: a run that panics — on its own goroutine or in a launch
// goroutine — returns the panic as its error and gives the lease back, so the next trigger (an
// interruption's replacement request, say) runs now instead of coalescing into a lease held for minutes.
func TestAPanicInARunReleasesTheLeaseAtOnce(t *testing.T) {
	cases := []struct {
		name   string
		wire   func(*testWorld)
		panics string
	}{
		{"on the run's goroutine", func(w *testWorld) { w.p.deps.NodeClasses = panickingResolver{} }, "resolve: index out of range"},
		{"in a read goroutine", func(w *testWorld) { w.p.deps.Cluster = panickingCluster{} }, "snapshot: nil map"},
		{"in a launch goroutine", func(w *testWorld) { w.p.deps.Launcher = panickingLauncher{} }, "launch: nil pointer dereference"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
			tc.wire(&w)
			var err error
			require.NotPanics(t, func() { _, err = w.p.Run(context.Background(), "run-1") })
			var pe *crash.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.panics, pe.Value)
			assert.True(t, leaseFree(t, w.store), "the lease is given back at once")
		})
	}
}

// ttlRecorder is the state store that remembers the TTL each lease was taken for.
type ttlRecorder struct {
	*state.Store
	ttls []time.Duration
}

func (r *ttlRecorder) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (state.Lease, error) {
	r.ttls = append(r.ttls, ttl)
	return r.Store.AcquireLease(ctx, name, holder, ttl)
}

// TestTheLeaseEndsWithTheInvocation: a run with a deadline holds the lease until that deadline and no
// longer, so an invocation Lambda ends at its timeout (where nothing can release) frees the lease then,
// not LeaseTTL later.
func TestTheLeaseEndsWithTheInvocation(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot()})
	rec := &ttlRecorder{Store: w.store}
	w.p.deps.Store = rec
	now := time.Now()
	w.p.deps.Now = func() time.Time { return now }
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(30*time.Second))
	defer cancel()
	_, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{30 * time.Second}, rec.ttls, "the invocation's deadline, not the default %s", DefaultLeaseTTL)

	_, err = w.p.Run(context.Background(), "run-2")
	require.NoError(t, err)
	assert.Equal(t, DefaultLeaseTTL, rec.ttls[1], "without a deadline the run falls back to LeaseTTL")
}
