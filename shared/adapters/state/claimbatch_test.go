package state

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func claimsNamed(n int, prefix string) []Claim {
	cs := make([]Claim, n)
	for i := range cs {
		cs[i] = Claim{Name: fmt.Sprintf("%s-%03d", prefix, i), NodePool: "burst", Batch: "batch-1",
			Labels: map[string]string{"karpenter.sh/nodepool": "burst"}}
	}
	return cs
}

func TestCreateClaimsWritesAWholeBatchInOneCall(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	created, err := s.CreateClaims(ctx, claimsNamed(MaxClaimsPerWrite, "c"))
	require.NoError(t, err)
	require.Len(t, created, MaxClaimsPerWrite)
	listed, err := s.ListClaims(ctx)
	require.NoError(t, err)
	assert.Len(t, listed, MaxClaimsPerWrite)
	for _, c := range listed {
		assert.Equal(t, Pending, c.Lifecycle)
		assert.Equal(t, int64(1), c.Version)
		assert.Equal(t, clk.Now(), c.CreatedAt)
		assert.Equal(t, "batch-1", c.Batch)
		assert.NotEmpty(t, c.WriteID)
	}

	_, err = s.CreateClaims(ctx, claimsNamed(MaxClaimsPerWrite+1, "d"))
	assert.ErrorIs(t, err, ErrInvalid, "over DynamoDB's 100 actions a transaction")
	_, err = s.CreateClaims(ctx, []Claim{{Name: "e"}})
	assert.ErrorIs(t, err, ErrInvalid, "a claim without a nodepool")
}

func TestCreateClaimsWritesNothingWhenANameIsTaken(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	_, err := s.CreateClaim(ctx, Claim{Name: "c-002", NodePool: "other"})
	require.NoError(t, err)

	_, err = s.CreateClaims(ctx, claimsNamed(5, "c"))
	require.ErrorIs(t, err, ErrAlreadyExists)
	var ce *ClaimsError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, []string{"c-002"}, ce.Names)
	listed, err := s.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, listed, 1, "all or nothing")
	assert.Equal(t, "other", listed[0].NodePool, "the taken claim is untouched")
}

func TestPutClaimsUpdatesAllOrNone(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	created, err := s.CreateClaims(ctx, claimsNamed(3, "c"))
	require.NoError(t, err)
	next := append([]Claim(nil), created...)
	for i := range next {
		next[i].Lifecycle, next[i].InstanceID = Launched, fmt.Sprintf("i-%d", i)
	}
	launched, err := s.PutClaims(ctx, created, next)
	require.NoError(t, err)
	for i, c := range launched {
		stored, err := s.GetClaim(ctx, c.Name)
		require.NoError(t, err)
		assert.Equal(t, Launched, stored.Lifecycle)
		assert.Equal(t, int64(2), stored.Version)
		assert.NotNil(t, stored.LaunchedAt, "stamped as PutClaim stamps")
		assert.Equal(t, fmt.Sprintf("i-%d", i), stored.InstanceID)
	}

	// Someone else moves c-001; a put based on the old versions writes none of the three.
	_, err = s.UpdateClaim(ctx, "c-001", func(c *Claim) error { c.Zone = "us-east-1a"; return nil })
	require.NoError(t, err)
	again := append([]Claim(nil), launched...)
	for i := range again {
		again[i].Lifecycle = Registered
	}
	_, err = s.PutClaims(ctx, launched, again)
	require.ErrorIs(t, err, ErrConflict)
	var ce *ClaimsError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, []string{"c-001"}, ce.Names)
	for _, c := range launched {
		stored, err := s.GetClaim(ctx, c.Name)
		require.NoError(t, err)
		assert.Equal(t, Launched, stored.Lifecycle, "%s untouched", c.Name)
	}

	backwards := append([]Claim(nil), launched...)
	backwards[0].Lifecycle = Pending
	_, err = s.PutClaims(ctx, launched, backwards)
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = s.PutClaims(ctx, launched, launched[:1])
	assert.ErrorIs(t, err, ErrInvalid)
}
