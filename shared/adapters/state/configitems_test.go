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
