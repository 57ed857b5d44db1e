package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// TestStaticStatusOfCountsEveryPoolInOnePass: StaticCounts agrees with CountStatic pool by pool, and
// StaticStatusOf answers only for a static NodePool, with its replicas and current nodes.
func TestStaticStatusOfCountsEveryPoolInOnePass(t *testing.T) {
	claims := []state.Claim{
		{Name: "a", NodePool: "fixed", Lifecycle: state.Initialized},
		{Name: "b", NodePool: "fixed", Lifecycle: state.Pending},
		{Name: "c", NodePool: "fixed", Lifecycle: state.Draining},
		{Name: "d", NodePool: "fixed", Lifecycle: state.Deleted},
		{Name: "e", NodePool: "other", Lifecycle: state.Initialized},
	}
	counts := StaticCounts(claims)
	assert.Equal(t, CountStatic(claims, "fixed"), counts["fixed"])
	assert.Equal(t, CountStatic(claims, "other"), counts["other"])
	assert.Equal(t, StaticCount{Active: 2, Deleting: 1}, counts["fixed"])

	replicas := int64(3)
	np := &apis.NodePool{}
	np.Name = "fixed"
	_, ok := StaticStatusOf(np, counts)
	assert.False(t, ok, "a dynamic pool has no static status")
	np.Spec.Replicas = &replicas
	s, ok := StaticStatusOf(np, counts)
	assert.True(t, ok)
	assert.Equal(t, StaticStatus{Replicas: 3, Nodes: 2, Deleting: 1}, s)
}

// TestStaticReplacementPlansOneClaimThatRecordsAndLaunches: the disruption function's Launches plan one
// claim of a static pool (the pool's labels, no pods) that Record accepts and Launch launches, as a
// drift replacement; a dynamic pool has none.
func TestStaticReplacementPlansOneClaimThatRecordsAndLaunches(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot()})
	withStaticPool(t, w.store, staticPoolYAML("2", "{nodes: 5}"), true)
	l, err := w.p.PrepareLaunches(ctx)
	require.NoError(t, err)
	for _, p := range l.Pools {
		assert.NotEqual(t, "fixed", p.Name, "static pools stay out of the pools consolidation places pods on")
	}
	cp, err := l.StaticReplacement("fixed", scheduling.Input{})
	require.NoError(t, err)
	assert.Equal(t, "fixed", cp.NodePool)
	assert.Empty(t, cp.PodNames)
	assert.NotEmpty(t, cp.InstanceTypeOptions)
	pending, err := l.Record(ctx, cp, "fixed-replacement", []string{"fixed-old"})
	require.NoError(t, err)
	launched, err := pending.Launch(ctx)
	require.NoError(t, err)
	require.NotNil(t, launched)
	c, err := w.store.GetClaim(ctx, "fixed-replacement")
	require.NoError(t, err)
	assert.Equal(t, "fixed", c.NodePool)
	assert.Equal(t, []string{"fixed-old"}, c.Replaces)
	assert.Equal(t, "fixed", c.Labels["role"])

	_, err = l.StaticReplacement("default", scheduling.Input{})
	assert.ErrorContains(t, err, "nodepool default is not a static NodePool this deployment keeps")
}
