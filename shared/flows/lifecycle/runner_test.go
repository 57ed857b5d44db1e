package lifecycle

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// The end-to-end behaviour is tested against moto and a real API server in ./e2e; these unit tests pin
// the settle loop with stateful fakes and a fake clock.

type fakeStore struct {
	// mu makes the store safe for a pass's workers, as DynamoDB is.
	mu        sync.Mutex
	claims    []state.Claim
	decisions []state.Decision
	absences  map[string]state.PoolAbsence
	// reserved holds each node pool's disruption-ledger slots, by claim.
	reserved map[string]map[string]bool
}

func (f *fakeStore) NotePoolAbsent(_ context.Context, pool string, at time.Time) (state.PoolAbsence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.absences == nil {
		f.absences = map[string]state.PoolAbsence{}
	}
	a, ok := f.absences[pool]
	if !ok {
		a = state.PoolAbsence{NodePool: pool, Since: at}
	}
	a.Passes++
	f.absences[pool] = a
	return a, nil
}
func (f *fakeStore) PoolAbsences(context.Context) ([]state.PoolAbsence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []state.PoolAbsence
	for _, a := range f.absences {
		out = append(out, a)
	}
	return out, nil
}
func (f *fakeStore) ClearPoolAbsence(_ context.Context, pool string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.absences, pool)
	return nil
}
func (f *fakeStore) ReserveDisruption(_ context.Context, pool, claim string, allowed int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reserved == nil {
		f.reserved = map[string]map[string]bool{}
	}
	if f.reserved[pool] == nil {
		f.reserved[pool] = map[string]bool{}
	}
	if f.reserved[pool][claim] {
		return nil
	}
	if len(f.reserved[pool]) >= allowed {
		return state.ErrBudgetExhausted
	}
	f.reserved[pool][claim] = true
	return nil
}

// release gives claim's ledger slot back, as the termination flow does once its node is gone.
func (f *fakeStore) release(pool, claim string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.reserved[pool], claim)
}

func (f *fakeStore) ListConfig(context.Context, string) ([]state.ConfigItem, error) { return nil, nil }
func (f *fakeStore) AcquireLease(_ context.Context, name, holder string, ttl time.Duration) (state.Lease, error) {
	return state.Lease{Name: name, Holder: holder, Token: 1}, nil
}
func (f *fakeStore) ReleaseLease(context.Context, state.Lease) error { return nil }
func (f *fakeStore) ListClaims(context.Context) ([]state.Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]state.Claim(nil), f.claims...), nil
}
func (f *fakeStore) ClaimsInLifecycle(_ context.Context, l state.Lifecycle) ([]state.Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []state.Claim
	for _, c := range f.claims {
		if c.Lifecycle == l {
			out = append(out, c)
		}
	}
	return out, nil
}
func (f *fakeStore) GetClaim(_ context.Context, name string) (state.Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.claims {
		if c.Name == name {
			return c, nil
		}
	}
	return state.Claim{}, state.ErrNotFound
}
func (f *fakeStore) UpdateClaim(_ context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.claims {
		if f.claims[i].Name == name {
			c := f.claims[i]
			if err := mutate(&c); err != nil {
				return state.Claim{}, err
			}
			f.claims[i] = c
			return c, nil
		}
	}
	return state.Claim{}, state.ErrNotFound
}

// PutClaim writes c if the stored claim is still old, as DynamoDB's conditional write on the version
// does; a fake writer may change a claim without its version, so the whole claim is compared.
func (f *fakeStore) PutClaim(_ context.Context, old, c state.Claim) (state.Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.claims {
		if f.claims[i].Name == old.Name {
			if !reflect.DeepEqual(f.claims[i], old) {
				return state.Claim{}, state.ErrConflict
			}
			c.Version = old.Version + 1
			f.claims[i] = c
			return c, nil
		}
	}
	return state.Claim{}, state.ErrNotFound
}
func (f *fakeStore) CreateClaim(_ context.Context, c state.Claim) (state.Claim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims = append(f.claims, c)
	return c, nil
}
func (f *fakeStore) RecordDecision(_ context.Context, d state.Decision) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decisions = append(f.decisions, d)
	return nil
}

type fakeNodes struct{ err error }

func (f fakeNodes) List(context.Context, metav1.ListOptions) (*corev1.NodeList, error) {
	return &corev1.NodeList{}, f.err
}

type noWrites struct{}

func (noWrites) Taint(context.Context, string, corev1.Taint) error {
	return errors.New("unexpected write")
}
func (noWrites) Untaint(context.Context, string, corev1.Taint) error {
	return errors.New("unexpected write")
}
func (noWrites) Label(context.Context, string, map[string]*string) error {
	return errors.New("unexpected write")
}
func (noWrites) AddFinalizer(context.Context, string, string) error {
	return errors.New("unexpected write")
}
func (noWrites) RemoveFinalizer(context.Context, string, string) error {
	return errors.New("unexpected write")
}

type fakeInstances struct{ list []instance.Instance }

func (f fakeInstances) List(context.Context) ([]instance.Instance, error) { return f.list, nil }
func (f fakeInstances) LiveByID(_ context.Context, ids []string) ([]instance.Instance, error) {
	var out []instance.Instance
	for _, i := range f.list {
		for _, id := range ids {
			if i.ID == id {
				out = append(out, i)
			}
		}
	}
	return out, nil
}

// steppingClock advances by step on every reading.
type steppingClock struct {
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.now = c.now.Add(c.step)
	return c.now
}

func TestRunUntilSettledStopsAtTheMargin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	deadline, _ := ctx.Deadline()
	clk := &steppingClock{now: deadline.Add(-time.Minute), step: time.Second}
	store := &fakeStore{claims: []state.Claim{{Name: "default-a", NodePool: "default", Lifecycle: state.Pending, CreatedAt: clk.now}}}
	r := NewRunner(RunnerConfig{SettleMargin: 10 * time.Second}, RunnerDeps{Store: store, Nodes: fakeNodes{},
		NodeActions: noWrites{}, Instances: fakeInstances{}, Now: clk.Now})

	rep, err := r.RunUntilSettled(ctx, "run-1", time.Millisecond)
	require.NoError(t, err)
	assert.True(t, rep.Lease)
	assert.Greater(t, rep.Passes, 1, "a claim still pending keeps the loop going")
	assert.Equal(t, 1, rep.Joining)
	assert.LessOrEqual(t, deadline.Sub(clk.now), 10*time.Second+time.Millisecond,
		"it stops only once the deadline is within the margin plus one interval")
	assert.Greater(t, deadline.Sub(clk.now), 5*time.Second, "and not much later")
	assert.Empty(t, rep.Errors)
}

func TestRunUntilSettledMakesOnePassWhenNothingJoins(t *testing.T) {
	store := &fakeStore{claims: []state.Claim{{Name: "default-b", NodePool: "default", Lifecycle: state.Initialized,
		InstanceID: "i-0b", CreatedAt: time.Unix(0, 0)}}}
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: store, Nodes: fakeNodes{}, NodeActions: noWrites{},
		Instances: fakeInstances{list: []instance.Instance{{ID: "i-0b", Tags: map[string]string{instance.TagNodeClaim: "default-b"}}}},
		Now:       func() time.Time { return time.Unix(3600, 0) }})
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	rep, err := r.RunUntilSettled(ctx, "run-1", time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Passes)
	assert.Equal(t, 0, rep.Joining)
}

func TestFailedNodeListDecidesNothing(t *testing.T) {
	store := &fakeStore{claims: []state.Claim{{Name: "default-c", NodePool: "default", Lifecycle: state.Pending, CreatedAt: time.Unix(0, 0)}}}
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: store, Nodes: fakeNodes{err: errors.New("410 Gone")}, NodeActions: noWrites{},
		Instances: fakeInstances{}, Now: func() time.Time { return time.Unix(3600, 0) }})
	rep, err := r.Run(context.Background(), "run-1")
	require.ErrorContains(t, err, "listing nodes: 410 Gone")
	assert.Equal(t, 1, rep.Passes)
	assert.Equal(t, state.Pending, store.claims[0].Lifecycle, "the launch timeout waits for complete data")
	assert.Empty(t, store.decisions)
}

func TestRunNeedsARunIDAndRunUntilSettledAnInterval(t *testing.T) {
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: &fakeStore{}})
	_, err := r.Run(context.Background(), "")
	assert.ErrorContains(t, err, "run id is required")
	_, err = r.RunUntilSettled(context.Background(), "run-1", 0)
	assert.ErrorContains(t, err, "every must be positive")
}
