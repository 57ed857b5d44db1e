package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/crash"
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

// panickingNodes panics while the pass lists Nodes.
type panickingNodes struct{}

func (panickingNodes) List(context.Context, metav1.ListOptions) (*corev1.NodeList, error) {
	panic("list: nil pointer dereference")
}

// TestAPanicInAPassReleasesTheLeaseAtOnce: the pass's panic comes back as its error and the lease is given
// back, rather than held until it expires; a pass with a deadline holds the lease until that deadline only.
func TestAPanicInAPassReleasesTheLeaseAtOnce(t *testing.T) {
	store := &leaseLog{fakeStore: &fakeStore{}}
	now := time.Now()
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: store, Nodes: panickingNodes{}, NodeActions: noWrites{},
		Instances: fakeInstances{}, Now: func() time.Time { return now }})
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(50*time.Second))
	defer cancel()
	var err error
	require.NotPanics(t, func() { _, err = r.Run(ctx, "run-1") })
	var pe *crash.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "list: nil pointer dereference", pe.Value)
	assert.Equal(t, 1, store.released)
	assert.Equal(t, []time.Duration{50 * time.Second}, store.ttls, "the invocation's deadline, not DefaultLeaseTTL")
}
