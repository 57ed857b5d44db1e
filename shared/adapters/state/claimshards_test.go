package state

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClaimsSpreadOverShards(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	_, err := s.CreateClaims(ctx, claimsNamed(MaxClaimsPerWrite, "c"))
	require.NoError(t, err)
	used := map[int]int{}
	for k := 0; k < ClaimShards; k++ {
		out, err := s.db.Query(ctx, s.partition(livePartition(k), ""))
		require.NoError(t, err)
		used[k] = len(out.Items)
		for _, it := range out.Items {
			var c Claim
			require.NoError(t, attributevalue.UnmarshalMap(it, &c))
			assert.Equal(t, k, claimShard(c.Name), "each claim is in its name's shard")
		}
	}
	assert.Len(t, used, ClaimShards)
	for k, n := range used {
		assert.Positive(t, n, "40 claims use every one of the 16 shards (shard %d)", k)
	}
}

func TestDeletedClaimsLeaveTheLiveClaims(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	for _, name := range []string{"a", "b", "c"} {
		_, err := s.CreateClaim(ctx, Claim{Name: name, NodePool: "p"})
		require.NoError(t, err)
	}
	_, err := s.UpdateClaim(ctx, "b", func(c *Claim) error { c.Lifecycle, c.InstanceID = Launched, "i-b"; return nil })
	require.NoError(t, err)
	gone, err := s.UpdateClaim(ctx, "b", func(c *Claim) error { c.Lifecycle = Deleted; return nil })
	require.NoError(t, err)
	assert.Equal(t, clk.Now().Add(DeletedClaimRetention).Unix(), gone.TTL)

	live, err := s.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c"}, names(live))
	deleted, err := s.ListDeletedClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, names(deleted))
	all, err := s.ListAllClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, names(all))

	read, err := s.GetClaim(ctx, "b")
	require.NoError(t, err, "a deleted claim is still read by name")
	assert.Equal(t, Deleted, read.Lifecycle)
	assert.Equal(t, gone.Version, read.Version)
	byInstance, err := s.ClaimByInstance(ctx, "i-b")
	require.NoError(t, err, "and by its instance")
	assert.Equal(t, "b", byInstance.Name)

	_, err = s.CreateClaim(ctx, Claim{Name: "b", NodePool: "p"})
	assert.True(t, IsAlreadyExists(err), "a deleted claim keeps its name taken: %v", err)
	_, err = s.UpdateClaim(ctx, "b", func(c *Claim) error { c.DisruptionReason = "audit"; return nil })
	require.NoError(t, err, "a deleted claim can still be updated")
	_, err = s.PutClaim(ctx, gone, gone)
	assert.True(t, IsConflict(err), "with the version check: %v", err)
	live, err = s.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c"}, names(live), "an update of a deleted claim leaves it out of the live ones")

	clk.Advance(DeletedClaimRetention)
	_, err = s.GetClaim(ctx, "b")
	assert.True(t, IsNotFound(err), "past its retention a deleted claim is gone, whenever DynamoDB removes it: %v", err)
	deleted, err = s.ListDeletedClaims(ctx)
	require.NoError(t, err)
	assert.Empty(t, deleted)
	_, err = s.CreateClaim(ctx, Claim{Name: "b", NodePool: "p"})
	require.NoError(t, err, "and its name is free again")
}

func TestAMoveToDeletedIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	created, err := s.CreateClaims(ctx, claimsNamed(3, "m"))
	require.NoError(t, err)
	_, err = s.UpdateClaim(ctx, "m-001", func(c *Claim) error { c.Zone = "us-east-1a"; return nil })
	require.NoError(t, err)
	next := append([]Claim(nil), created...)
	for i := range next {
		next[i].Lifecycle = Deleted
	}
	_, err = s.PutClaims(ctx, created, next)
	var ce *ClaimsError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, []string{"m-001"}, ce.Names)
	assert.ErrorIs(t, err, ErrConflict)
	live, err := s.ListClaims(ctx)
	require.NoError(t, err)
	assert.Len(t, live, 3, "no claim moved")
	deleted, err := s.ListDeletedClaims(ctx)
	require.NoError(t, err)
	assert.Empty(t, deleted)
}

func TestEveryClaimWriteMovesItsShardCounter(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	counter := func(name string) string {
		t.Helper()
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: counterKey(claimShard(name)),
			ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		if out.Item == nil {
			return ""
		}
		n, err := numberAttr(out.Item, attrChanges)
		require.NoError(t, err)
		return fmt.Sprint(n)
	}
	before := counter("x")
	_, err := s.CreateClaim(ctx, Claim{Name: "x", NodePool: "p"})
	require.NoError(t, err)
	created := counter("x")
	assert.NotEqual(t, before, created, "create")
	_, err = s.UpdateClaim(ctx, "x", func(c *Claim) error { c.Lifecycle = Launched; return nil })
	require.NoError(t, err)
	updated := counter("x")
	assert.NotEqual(t, created, updated, "update")
	_, err = s.UpdateClaim(ctx, "x", func(c *Claim) error { c.Lifecycle = Deleted; return nil })
	require.NoError(t, err)
	moved := counter("x")
	assert.NotEqual(t, updated, moved, "move to deleted")
	_, err = s.CreateClaim(ctx, Claim{Name: "x", NodePool: "p"})
	require.True(t, IsAlreadyExists(err))
	_, err = s.PutClaim(ctx, Claim{Name: "x", Version: 1, Lifecycle: Launched}, Claim{Name: "x", Version: 1, Lifecycle: Launched})
	require.True(t, IsConflict(err))
	assert.Equal(t, moved, counter("x"), "a write that failed moved nothing")
}

func TestClaimReplacementsAreFoundByKey(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	_, err := s.CreateClaims(ctx, []Claim{
		{Name: "r1", NodePool: "p", Replaces: []string{"old-a", "old-b"}},
		{Name: "r2", NodePool: "p", Replaces: []string{"old-a"}},
		{Name: "other", NodePool: "p"},
	})
	require.NoError(t, err)
	got, err := s.ClaimReplacements(ctx, "old-a")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"r1", "r2"}, names(got))
	got, err = s.ClaimReplacements(ctx, "old-b")
	require.NoError(t, err)
	assert.Equal(t, []string{"r1"}, names(got))
	got, err = s.ClaimReplacements(ctx, "old-c")
	require.NoError(t, err)
	assert.Empty(t, got)

	_, err = s.UpdateClaim(ctx, "r2", func(c *Claim) error { c.Lifecycle = Deleted; return nil })
	require.NoError(t, err)
	got, err = s.ClaimReplacements(ctx, "old-a")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"r1", "r2"}, names(got), "a deleted replacement is still found, with its lifecycle")

	// A create that failed after its markers were written leaves a marker that finds nothing.
	_, err = s.CreateClaim(ctx, Claim{Name: "r1", NodePool: "p", Replaces: []string{"old-d"}})
	require.True(t, IsAlreadyExists(err))
	got, err = s.ClaimReplacements(ctx, "old-d")
	require.NoError(t, err)
	assert.Empty(t, got, "r1 does not replace old-d")

	clk.Advance(DeletedClaimRetention)
	got, err = s.ClaimReplacements(ctx, "old-b")
	require.NoError(t, err)
	assert.Empty(t, got, "markers expire")
}

func names(cs []Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
