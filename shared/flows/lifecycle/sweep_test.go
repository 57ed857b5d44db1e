package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// countedInstances counts the tag-filtered lists.
type countedInstances struct {
	fakeInstances
	lists int
}

func (c *countedInstances) List(ctx context.Context) ([]instance.Instance, error) {
	c.lists++
	return c.fakeInstances.List(ctx)
}

func TestSweepEveryListsInstancesOnlyOnSweepPasses(t *testing.T) {
	now := time.Unix(3600, 0)
	store := &fakeStore{claims: []state.Claim{{Name: "default-d", NodePool: "default", Lifecycle: state.Initialized,
		InstanceID: "i-0d", CreatedAt: time.Unix(0, 0)}}}
	insts := &countedInstances{fakeInstances: fakeInstances{list: []instance.Instance{{ID: "i-0d",
		Tags: map[string]string{instance.TagNodeClaim: "default-d"}}}}}
	r := NewRunner(RunnerConfig{SweepEvery: 30 * time.Second}, RunnerDeps{Store: store, Nodes: fakeNodes{}, NodeActions: noWrites{},
		Instances: insts, Now: func() time.Time { return now }})

	rep, err := r.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, insts.lists, "the first pass sweeps")
	assert.Empty(t, rep.Skipped)

	now = now.Add(10 * time.Second)
	rep, err = r.Run(context.Background(), "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, insts.lists, "within SweepEvery the instances are not listed")
	assert.Equal(t, "hand-overs and repairs: the pass sweeps every 30s; between sweeps it reads only the joining claims", rep.Skipped)
	assert.Equal(t, state.Initialized, store.claims[0].Lifecycle, "an unlisted instance is no ghost")

	now = now.Add(21 * time.Second)
	rep, err = r.Run(context.Background(), "run-3")
	require.NoError(t, err)
	assert.Equal(t, 2, insts.lists, "SweepEvery after the last sweep, the next pass sweeps")
	assert.Empty(t, rep.Skipped)
}

func TestSweepEveryZeroListsOnEveryPass(t *testing.T) {
	insts := &countedInstances{}
	r := NewRunner(RunnerConfig{}, RunnerDeps{Store: &fakeStore{}, Nodes: fakeNodes{}, NodeActions: noWrites{},
		Instances: insts, Now: func() time.Time { return time.Unix(3600, 0) }})
	for range 3 {
		_, err := r.Run(context.Background(), "run")
		require.NoError(t, err)
	}
	assert.Equal(t, 3, insts.lists)
}
