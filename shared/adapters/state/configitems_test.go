package state

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigItemsOptimisticLocking(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	np, err := s.PutConfig(ctx, ConfigItem{Kind: "NodePool", Name: "default", DriftHash: "h1", Spec: `{"a":1}`})
	require.NoError(t, err)
	assert.EqualValues(t, 1, np.Version)
	_, err = s.PutConfig(ctx, ConfigItem{Kind: "NodePool", Name: "default", DriftHash: "h1", Spec: `{}`})
	assert.True(t, IsConflict(err), "creating over an existing item conflicts")

	np.DriftHash, np.Spec = "h2", `{"a":2}`
	np2, err := s.PutConfig(ctx, np)
	require.NoError(t, err)
	assert.EqualValues(t, 2, np2.Version)
	_, err = s.PutConfig(ctx, np) // np still says version 1
	assert.True(t, IsConflict(err))

	_, err = s.PutConfig(ctx, ConfigItem{Kind: "EC2NodeClass", Name: "default", DriftHash: "n1", Spec: `{}`})
	require.NoError(t, err)
	pools, err := s.ListConfig(ctx, "NodePool")
	require.NoError(t, err)
	require.Len(t, pools, 1)
	assert.Equal(t, "h2", pools[0].DriftHash)
	all, err := s.ListConfig(ctx, "")
	require.NoError(t, err)
	assert.Len(t, all, 2)

	assert.True(t, IsConflict(s.DeleteConfig(ctx, "NodePool", "default", 1)), "deleting a stale version conflicts")
	require.NoError(t, s.DeleteConfig(ctx, "NodePool", "default", 2))
	_, err = s.GetConfig(ctx, "NodePool", "default")
	assert.True(t, IsNotFound(err))
	require.NoError(t, s.DeleteConfig(ctx, "NodePool", "default", 2), "deleting what is gone is fine")
}

// A config write whose answer was lost and retried by the SDK finds its own write, not a conflict: an
// apply under a busy DynamoDB (or moto) must not fail on the item it just wrote.
func TestARetriedConfigWriteIsRecognisedAsItsOwn(t *testing.T) {
	ctx := context.Background()
	direct, _ := newStore(t)
	s := New(lostAnswers{direct.db}, direct.table, WithClock(direct.now))

	res, err := s.ApplyConfig(ctx, []ConfigItem{
		{Kind: "NodePool", Name: "default", SpecHash: "a", Spec: `{"a":1}`},
		{Kind: "EC2NodeClass", Name: "default", SpecHash: "n", Spec: `{}`},
	}, false)
	require.NoError(t, err, "each create's retry found the item its own first attempt wrote")
	assert.Len(t, res.Created, 2)

	res, err = s.ApplyConfig(ctx, []ConfigItem{{Kind: "NodePool", Name: "default", SpecHash: "b", Spec: `{"a":2}`}}, false)
	require.NoError(t, err, "the update's retry found the version its own first attempt wrote")
	assert.Equal(t, []string{"NodePool/default"}, res.Updated)
	stored, err := direct.GetConfig(ctx, "NodePool", "default")
	require.NoError(t, err)
	assert.EqualValues(t, 2, stored.Version, "updated once")
	assert.Equal(t, `{"a":2}`, stored.Spec)

	other := stored
	other.Version = 1 // a stale writer, with its own write id, still conflicts
	_, err = s.PutConfig(ctx, other)
	assert.True(t, IsConflict(err), "%v", err)
}
