package provisioning

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// readCountingStore counts the reads of the inputs runs may share (SharedInputsMaxAge).
type readCountingStore struct {
	Store
	config, unavailable atomic.Int32
}

func (s *readCountingStore) ListConfig(ctx context.Context, kind string) ([]state.ConfigItem, error) {
	s.config.Add(1)
	return s.Store.ListConfig(ctx, kind)
}

func (s *readCountingStore) UnavailableOfferings(ctx context.Context) ([]state.UnavailableOffering, error) {
	s.unavailable.Add(1)
	return s.Store.UnavailableOfferings(ctx)
}

// withCountedReads puts a readCountingStore under w's provisioner and a clock the test moves.
func withCountedReads(w testWorld) (*readCountingStore, *time.Time) {
	counting := &readCountingStore{Store: w.store}
	w.p.deps.Store = markCounter{Store: counting, marks: &w.p.marks}
	now := time.Now()
	w.p.deps.Now = func() time.Time { return now }
	return counting, &now
}

func TestRunsWithinTheSharedInputsAgeReadTheConfigurationOnce(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	counting, now := withCountedReads(w)
	ctx := context.Background()

	first, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, first.Claims, 1)
	second, err := w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, second.InFlight, "the claims are read by every run")
	assert.Equal(t, int32(1), counting.config.Load(), "the second run plans with the configuration the first read")
	assert.Equal(t, int32(1), counting.unavailable.Load())

	*now = now.Add(SharedInputsMaxAge + time.Millisecond)
	_, err = w.p.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, int32(2), counting.config.Load(), "older than SharedInputsMaxAge: read again")
	assert.Equal(t, int32(2), counting.unavailable.Load())
}

func TestARunThatMarkedAnOfferingUnavailableMakesTheNextReadAgain(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	w.ec2.capacity = map[instance.Offering]bool{} // every offering is out of capacity
	counting, _ := withCountedReads(w)
	ctx := context.Background()

	first, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.NotEmpty(t, first.LaunchFailures)
	_, err = w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, int32(2), counting.unavailable.Load(), "the offerings the first run marked are read by the second")
	assert.Equal(t, int32(2), counting.config.Load())
	offs, err := w.store.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, offs)
}
