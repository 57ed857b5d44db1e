package lifecycle

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// manualClock moves only when told.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// slowNodes lists no Nodes, taking took on the clock: a pass's duration, as 5,000 Nodes make it.
type slowNodes struct {
	clock *manualClock
	took  time.Duration
}

func (s slowNodes) List(context.Context, metav1.ListOptions) (*corev1.NodeList, error) {
	s.clock.advance(s.took)
	return &corev1.NodeList{}, nil
}

// TestAnotherPassStartsOnlyIfTheLastOneWouldFit: passes of 9 s leave 12 s after the second; the fixed
// settle margin (10 s) started a third, to be cut off by the deadline. RunUntilSettled now starts one
// only if the time left covers the measured pass with headroom (13.5 s).
func TestAnotherPassStartsOnlyIfTheLastOneWouldFit(t *testing.T) {
	clk := &manualClock{now: time.Now()} // the context's own timer must not fire during the test
	store := &fakeStore{claims: []state.Claim{{Name: "default-a", NodePool: "default", Lifecycle: state.Pending, CreatedAt: clk.now}}}
	r := NewRunner(RunnerConfig{SettleMargin: 10 * time.Second}, RunnerDeps{Store: store, Nodes: slowNodes{clock: clk, took: 9 * time.Second},
		NodeActions: noWrites{}, Instances: fakeInstances{}, Now: clk.Now})
	ctx, cancel := context.WithDeadline(context.Background(), clk.Now().Add(30*time.Second))
	defer cancel()

	rep, err := r.RunUntilSettled(ctx, "run-1", time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Joining)
	assert.Equal(t, 2, rep.Passes, "12 s left covers the settle margin, not a 9 s pass with headroom")
	last, ok := r.passes.Last()
	require.True(t, ok)
	assert.Equal(t, 9*time.Second, last)
}
