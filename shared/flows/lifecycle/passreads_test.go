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

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// readCounter is hookStore counting the claim reads: whole lists, lists by lifecycle, and reads by key.
type readCounter struct {
	*hookStore
	mu                    sync.Mutex
	lists, byState, byKey int
}

func (c *readCounter) count(n *int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*n++
}

func (c *readCounter) ListClaims(ctx context.Context) ([]state.Claim, error) {
	c.count(&c.lists)
	return c.hookStore.ListClaims(ctx)
}

func (c *readCounter) ClaimsInLifecycle(ctx context.Context, l state.Lifecycle) ([]state.Claim, error) {
	c.count(&c.byState)
	return c.hookStore.ClaimsInLifecycle(ctx, l)
}

func (c *readCounter) GetClaim(ctx context.Context, name string) (state.Claim, error) {
	c.count(&c.byKey)
	return c.hookStore.GetClaim(ctx, name)
}

// UpdateClaim reads the claim by key before it writes it, as state.Store's does.
func (c *readCounter) UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error) {
	c.count(&c.byKey)
	return c.hookStore.UpdateClaim(ctx, name, mutate)
}

// changingNodes lists the Nodes it holds at the time of the list.
type changingNodes struct {
	mu    sync.Mutex
	nodes listedNodes
}

func (c *changingNodes) List(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes.List(ctx, opts)
}

// TestAPassBetweenSweepsReadsOnlyTheJoiningClaims counts what passes read. A sweep lists the instances
// and every live claim and decides everything (the finalizer upkeep of an initialized claim's Node among
// it); a pass within SweepEvery of it lists neither: it reads the joining claims by lifecycle, registers
// the Node that joined meanwhile (the claim moved from the version listed, read again only before the
// unregistered taint is lifted), and
// leaves a deleted Node's hand-over to the next sweep, which reads the whole list again and hands it over.
func TestAPassBetweenSweepsReadsOnlyTheJoiningClaims(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	old := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	joining := claimOn("default-b", "default", state.Launched, "i-0b", "")
	joining.CreatedAt, joining.LaunchedAt = testNow, &testNow
	store := &readCounter{hookStore: &hookStore{fakeStore: fakeStore{claims: []state.Claim{old, joining}}, config: configItems()}}
	nodeA := ourNode("ip-a", "i-0a", false)
	nodeA.Finalizers = nil // registered before the finalizer existed: the sweep's upkeep gives it one
	nodes := &changingNodes{nodes: listedNodes{nodeA}}
	insts := &countedInstances{fakeInstances: fakeInstances{list: []instance.Instance{
		{ID: "i-0a", LaunchTime: testNow.Add(-time.Hour), Tags: map[string]string{instance.TagNodeClaim: "default-a"}},
		{ID: "i-0b", LaunchTime: testNow, Tags: map[string]string{instance.TagNodeClaim: "default-b"}}}}}
	writer, q := &recWriter{}, &queue{}
	now := testNow
	r := NewRunner(RunnerConfig{SweepEvery: 30 * time.Second}, RunnerDeps{Store: store, Nodes: nodes, NodeActions: writer,
		Instances: insts, Terminations: q, Now: func() time.Time { return now }})

	rep, err := r.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, insts.lists, "the first pass sweeps")
	assert.Equal(t, 1, store.lists)
	assert.Zero(t, store.byState)
	assert.Equal(t, []string{"addFinalizer ip-a nodewright.sh/termination"}, writer.calls)
	assert.Equal(t, "NodeNotFound", rep.Waiting["default-b"])
	assert.NotNil(t, rep.Usage)

	// The joining claim's Node registers, and someone deletes the old Node.
	joined := node("ip-b", "aws:///us-east-1a/i-0b", map[string]string{"karpenter.sh/nodepool": "default"},
		corev1.Taint{Key: UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute})
	joined.Status.Conditions = []corev1.NodeCondition{ready}
	deleting := ourNode("ip-a", "i-0a", true)
	nodes.mu.Lock()
	nodes.nodes = listedNodes{deleting, joined}
	nodes.mu.Unlock()
	writer.calls = nil
	now = now.Add(10 * time.Second)
	rep, err = r.Run(context.Background(), "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, insts.lists, "no instance list between sweeps")
	assert.Equal(t, 1, store.lists, "no whole claim list between sweeps")
	assert.Equal(t, len(joiningLifecycles), store.byState, "one read per joining state")
	assert.Equal(t, 1, store.byKey, "the claim is moved from the version listed, and read by key only before the unregistered taint is lifted")
	assert.Equal(t, 1, rep.Registered)
	assert.Equal(t, state.Registered, store.claim(t, "default-b").Lifecycle)
	assert.Contains(t, writer.calls, "untaint ip-b "+UnregisteredTaintKey)
	assert.Empty(t, q.sent, "the deleted Node waits for the sweep")
	assert.Nil(t, rep.Usage, "the usage is summed on sweeps")
	assert.Equal(t, "hand-overs and repairs: the pass sweeps every 30s; between sweeps it reads only the joining claims", rep.Skipped)
	assert.Equal(t, 1, rep.Joining, "the registered claim is still joining")

	now = now.Add(21 * time.Second)
	rep, err = r.Run(context.Background(), "run-3")
	require.NoError(t, err)
	assert.Equal(t, 2, insts.lists, "SweepEvery after the last sweep, the next pass sweeps")
	assert.Equal(t, 2, store.lists)
	require.Len(t, q.sent, 1, "the sweep hands the deleted Node's claim over")
	assert.Equal(t, "default-a", q.sent[0].Claim)
	assert.Equal(t, ReasonNodeDeleted, q.sent[0].Reason)
	assert.Empty(t, rep.Skipped)
}

// TestReadJoiningKeepsTheNewerOfAClaimListedTwice: the index is read state by state, so a claim that
// moves in between can be listed in both; the pass keeps the newer version, once.
func TestReadJoiningKeepsTheNewerOfAClaimListedTwice(t *testing.T) {
	launched := claimOn("default-b", "default", state.Launched, "i-0b", "")
	launched.Version = 3
	registered := launched
	registered.Lifecycle, registered.NodeName, registered.Version = state.Registered, "ip-b", 4
	pending := claimOn("default-c", "default", state.Pending, "", "")
	store := &fakeStore{claims: []state.Claim{registered, launched, pending}}
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: store})
	got, err := r.readJoining(context.Background())
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, registered, got[0])
	assert.Equal(t, pending, got[1])
}

// TestARunKeepsTheLastSweepsUsage: the passes between sweeps sum no usage, so the run reports the usage
// its last sweep summed.
func TestARunKeepsTheLastSweepsUsage(t *testing.T) {
	var rep RunReport
	rep.add(RunReport{Passes: 1, Usage: []PoolUsage{{NodePool: "default", Nodes: 3}}})
	rep.add(RunReport{Passes: 1})
	assert.Equal(t, []PoolUsage{{NodePool: "default", Nodes: 3}}, rep.Usage)
	assert.Equal(t, 2, rep.Passes)
}
