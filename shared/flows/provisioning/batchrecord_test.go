package provisioning

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// countingStore is the real store, counting the claim writes a run makes and letting a test act just
// before a CreateClaims or PutClaims reaches it.
type countingStore struct {
	*state.Store
	mu                              sync.Mutex
	creates, batchCreates, puts     int
	updates, decisions, decisionSet int
	decisionItems                   int
	createNames                     [][]string
	beforeCreate                    func(cs []state.Claim) error
	beforePut                       func(news []state.Claim)
}

func (c *countingStore) count(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

func (c *countingStore) CreateClaim(ctx context.Context, cl state.Claim) (state.Claim, error) {
	c.count(func() { c.creates++ })
	return c.Store.CreateClaim(ctx, cl)
}

func (c *countingStore) CreateClaims(ctx context.Context, cs []state.Claim) ([]state.Claim, error) {
	var names []string
	for _, cl := range cs {
		names = append(names, cl.Name)
	}
	c.count(func() { c.batchCreates++; c.createNames = append(c.createNames, names) })
	if c.beforeCreate != nil {
		if err := c.beforeCreate(cs); err != nil {
			return nil, err
		}
	}
	return c.Store.CreateClaims(ctx, cs)
}

func (c *countingStore) PutClaims(ctx context.Context, olds, news []state.Claim) ([]state.Claim, error) {
	c.count(func() { c.puts++ })
	if c.beforePut != nil {
		c.beforePut(news)
	}
	return c.Store.PutClaims(ctx, olds, news)
}

func (c *countingStore) UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error) {
	c.count(func() { c.updates++ })
	return c.Store.UpdateClaim(ctx, name, mutate)
}

func (c *countingStore) RecordDecision(ctx context.Context, d state.Decision) error {
	c.count(func() { c.decisions++ })
	return c.Store.RecordDecision(ctx, d)
}

func (c *countingStore) RecordDecisions(ctx context.Context, ds []state.Decision) error {
	c.count(func() { c.decisionSet++; c.decisionItems += len(ds) })
	return c.Store.RecordDecisions(ctx, ds)
}

func countedBatchWorld(t *testing.T, pods int) (testWorld, *fakeBatchEC2, *countingStore) {
	w, f := batchWorld(t, pods)
	cs := &countingStore{Store: w.store}
	w.p.deps.Store = cs
	return w, f, cs
}

func TestABatchIsRecordedInOneTransactionEachWay(t *testing.T) {
	ctx := context.Background()
	w, f, cs := countedBatchWorld(t, 5)
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, 5)
	require.Len(t, f.calls, 1)
	assert.Equal(t, 1, cs.batchCreates, "five pending claims, one transaction")
	assert.Equal(t, 1, cs.puts, "five launched claims, one transaction")
	assert.Equal(t, 1, cs.decisionSet, "five Launch decisions, written together")
	assert.Zero(t, cs.creates+cs.updates+cs.decisions, "no claim went one by one")
	decisions, err := w.store.Decisions(ctx, "nodeclaim/"+rep.Claims[0].Name, 10)
	require.NoError(t, err)
	require.Len(t, decisions, 1)
	assert.Equal(t, "Launch", decisions[0].Kind)
	assert.Equal(t, f.calls[0].Batch, decisions[0].Details["batch"])
}

func TestABatchDrawsNewNamesOnlyForTheTakenOnes(t *testing.T) {
	ctx := context.Background()
	w, f, cs := countedBatchWorld(t, 5)
	taken := ""
	cs.beforeCreate = func(claims []state.Claim) error {
		if taken == "" { // another run writes the second name first
			taken = claims[1].Name
			_, err := w.store.CreateClaim(ctx, state.Claim{Name: taken, NodePool: "other"})
			return err
		}
		return nil
	}
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Len(t, rep.Claims, 5)
	require.Len(t, f.calls, 1, "the batch launched once, after its records were written")
	require.Len(t, cs.createNames, 2)
	first, second := cs.createNames[0], cs.createNames[1]
	assert.NotEqual(t, first[1], second[1], "the taken name was drawn again")
	assert.Equal(t, append(first[:1:1], first[2:]...), append(second[:1:1], second[2:]...), "the others kept theirs")
	other, err := w.store.GetClaim(ctx, taken)
	require.NoError(t, err)
	assert.Equal(t, "other", other.NodePool, "the other run's claim is untouched")
	assert.Equal(t, state.Pending, other.Lifecycle)
}

func TestABatchWhoseClaimsCannotBeWrittenLaunchesNothingAndAsksForAnotherRun(t *testing.T) {
	ctx := context.Background()
	w, f, cs := countedBatchWorld(t, 5)
	cs.beforeCreate = func([]state.Claim) error { return errors.New("ProvisionedThroughputExceededException") }
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	assert.Empty(t, f.calls, "nothing launched without its records")
	require.Len(t, rep.Skipped, 1)
	assert.Contains(t, rep.Skipped[0], "5 pods (claims not written")
	require.Len(t, rep.Errors, 1)
	assert.Contains(t, rep.Errors[0], "ProvisionedThroughputExceededException")
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Empty(t, claims)
	mark, err := w.store.Mark(ctx, SnapshotMark)
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "the run's snapshot does not satisfy the trigger: its pods need another run")
}

func TestABatchRecordsEachClaimAloneWhenOneMovedMeanwhile(t *testing.T) {
	ctx := context.Background()
	w, f, cs := countedBatchWorld(t, 4)
	var adopted state.Claim
	cs.beforePut = func(news []state.Claim) {
		// The lifecycle adopts the second instance by its claim tag before the run records it.
		var err error
		adopted, err = w.store.UpdateClaim(ctx, news[1].Name, func(c *state.Claim) error {
			c.Lifecycle, c.InstanceID = state.Launched, news[1].InstanceID
			return nil
		})
		require.NoError(t, err)
	}
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Len(t, rep.Claims, 4)
	require.Len(t, f.calls, 1)
	assert.Equal(t, 4, cs.updates, "after the transaction conflicted, every claim was recorded alone")
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	for _, c := range claims {
		assert.Equal(t, state.Launched, c.Lifecycle, c.Name)
		assert.NotEmpty(t, c.InstanceID, c.Name)
		if c.Name == adopted.Name {
			assert.Equal(t, adopted.Version, c.Version, "the adopted claim's newer record stands")
		} else {
			assert.NotEmpty(t, c.InstanceType, c.Name)
		}
	}
}

func TestARunWhoseNodeClassCouldNotBeReadAsksForAnotherRun(t *testing.T) {
	ctx := context.Background()
	w, f, _ := countedBatchWorld(t, 3)
	r := w.p.deps.NodeClasses.(*fakeResolver)
	r.err = errors.New("operation error EC2: DescribeImages, exceeded maximum number of attempts, 3: RequestLimitExceeded")
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, f.calls)
	require.Len(t, rep.Skipped, 1)
	assert.Contains(t, rep.Skipped[0], "EC2NodeClass default could not be resolved")
	mark, err := w.store.Mark(ctx, SnapshotMark)
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "a failed read satisfies no trigger: its pods need another run")

	r.err = nil
	rep, err = w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Len(t, rep.Claims, 3, "the next run launches")
	assert.Empty(t, rep.Skipped)
}
