package disruptionrun

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// leaseLog is the fake store that records the lease's TTLs and releases.
type leaseLog struct {
	*fakeStore
	ttls     []time.Duration
	released int
}

func (l *leaseLog) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (state.Lease, error) {
	l.ttls = append(l.ttls, ttl)
	return l.fakeStore.AcquireLease(ctx, name, holder, ttl)
}

func (l *leaseLog) ReleaseLease(ctx context.Context, lease state.Lease) error {
	l.released++
	return l.fakeStore.ReleaseLease(ctx, lease)
}

// panickingCluster panics while the run reads the cluster.
type panickingCluster struct{}

func (panickingCluster) Snapshot(context.Context) (*kube.Snapshot, error) { panic("snapshot: nil map") }

// TestAPanicInARunReleasesTheLeaseAtOnce: the run's panic comes back as its error and the lease is given
// back, rather than held until it expires.
func TestAPanicInARunReleasesTheLeaseAtOnce(t *testing.T) {
	f := newFixture(t, "100%")
	leases := &leaseLog{fakeStore: f.store}
	r := New(Config{ValidationDelay: -1}, Deps{Store: leases, Cluster: panickingCluster{}, Launcher: f.launch, Nodes: f.cluster,
		Terminations: f.terms, Events: f.events, Now: f.clock.Now})
	var err error
	require.NotPanics(t, func() { _, err = r.Run(context.Background(), "run-1") })
	var pe *crash.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "snapshot: nil map", pe.Value)
	assert.Equal(t, 1, leases.released)
}

// TestTheLeaseEndsWithTheInvocation: a run with a deadline holds the lease until that deadline, not for
// DefaultLeaseTTL past a crash the deadline ends.
func TestTheLeaseEndsWithTheInvocation(t *testing.T) {
	f := newFixture(t, "100%")
	leases := &leaseLog{fakeStore: f.store}
	r := New(Config{ValidationDelay: -1}, Deps{Store: leases, Cluster: f.cluster, Launcher: f.launch, Nodes: f.cluster,
		Terminations: f.terms, Events: f.events, Now: f.clock.Now})
	ctx, cancel := context.WithDeadline(context.Background(), f.clock.Now().Add(45*time.Second))
	defer cancel()
	_, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	require.NotEmpty(t, leases.ttls)
	assert.Equal(t, 45*time.Second, leases.ttls[0])
	assert.Equal(t, 1, leases.released)
}
