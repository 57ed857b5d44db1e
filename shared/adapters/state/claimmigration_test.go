package state

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// putLegacyClaim writes c as a release before sharding did: in the one CLAIM partition.
func putLegacyClaim(t *testing.T, s *Store, c Claim) {
	t.Helper()
	item, err := marshalItem(legacyClaimPartition, c.Name, c)
	require.NoError(t, err)
	_, err = s.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	require.NoError(t, err)
}

func TestClaimsWrittenBeforeShardingMoveToTheirShards(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	view := s.NewClaimsView()
	_, err := view.ListClaims(ctx) // a warm view from before the upgrade's first legacy claim
	require.NoError(t, err)
	ttl := clk.Now().Add(DeletedClaimRetention).Unix()
	putLegacyClaim(t, s, Claim{Name: "old-live", NodePool: "p", Lifecycle: Registered, Version: 3, InstanceID: "i-1",
		Replaces: []string{"drained"}})
	putLegacyClaim(t, s, Claim{Name: "old-gone", NodePool: "p", Lifecycle: Deleted, Version: 7, TTL: ttl})
	_, err = s.CreateClaim(ctx, Claim{Name: "both", NodePool: "new"})
	require.NoError(t, err)
	putLegacyClaim(t, s, Claim{Name: "both", NodePool: "legacy", Lifecycle: Launched, Version: 2})

	got, err := view.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"both", "old-live"}, names(got))
	assert.Equal(t, "new", got[0].NodePool, "a claim already in its shard wins over a legacy record")
	assert.EqualValues(t, 3, got[1].Version, "moved as it was")
	whole, err := s.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, got, whole)

	gone, err := s.GetClaim(ctx, "old-gone")
	require.NoError(t, err)
	assert.Equal(t, Deleted, gone.Lifecycle)
	assert.Equal(t, ttl, gone.TTL, "a deleted claim keeps its expiry")
	out, err := s.db.Query(ctx, s.partition(legacyClaimPartition, ""))
	require.NoError(t, err)
	assert.Empty(t, out.Items, "nothing is left in the legacy partition")

	replacements, err := s.ClaimReplacements(ctx, "drained")
	require.NoError(t, err)
	assert.Equal(t, []string{"old-live"}, names(replacements), "a moved replacement is found by key")

	_, err = s.UpdateClaim(ctx, "old-live", func(c *Claim) error { c.Lifecycle = Draining; return nil })
	require.NoError(t, err, "a moved claim is written with its version check as any other")
	_, err = view.ListClaims(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, view.LastRead().ShardsQueried)
}
