package termination

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// queries records the partition keys and indexes of every Query sent to DynamoDB.
type queries struct {
	*dynamodb.Client
	mu   sync.Mutex
	seen []string
}

func (q *queries) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	what := "pk " + pkOf(in)
	if in.IndexName != nil {
		what = "index " + *in.IndexName
	}
	q.mu.Lock()
	q.seen = append(q.seen, what)
	q.mu.Unlock()
	return q.Client.Query(ctx, in, optFns...)
}

func pkOf(in *dynamodb.QueryInput) string {
	for _, v := range in.ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			return s.Value
		}
	}
	return ""
}

// TestTheGateFindsReplacementsByKey: against DynamoDB (moto), the gate holds a drain for its replacement
// until it initializes, is not held by claims launched for other drains or pods, and reads no collection
// of claims on the way: no Query of a claim shard, none of an index.
func TestTheGateFindsReplacementsByKey(t *testing.T) {
	ctx := context.Background()
	cfg := awstest.Shared(t).Config()
	client := state.NewClient(cfg)
	_, err := client.CreateTable(ctx, state.CreateTableInput("gate"))
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	now := t0
	store := state.New(client, "gate", state.WithClock(func() time.Time { return now }))

	old, err := store.CreateClaim(ctx, state.Claim{Name: "default-old", NodePool: "default"})
	require.NoError(t, err)
	for _, l := range []state.Lifecycle{state.Launched, state.Registered, state.Initialized, state.Draining} {
		old, err = store.UpdateClaim(ctx, old.Name, func(c *state.Claim) error { c.Lifecycle = l; return nil })
		require.NoError(t, err)
	}
	_, err = store.CreateClaims(ctx, []state.Claim{
		{Name: "default-new", NodePool: "default", Replaces: []string{"default-old"}},
		{Name: "default-theirs", NodePool: "default", Replaces: []string{"default-other"}},
		{Name: "default-unrelated", NodePool: "default"},
	})
	require.NoError(t, err)
	now = t0.Add(time.Second)
	require.NoError(t, store.AdvanceMark(ctx, ReplacementMark, now))

	recorded := &queries{Client: client}
	s := NewService(Config{QueueURL: "q"}, Deps{Store: state.New(recorded, "gate", state.WithClock(func() time.Time { return now }))})
	gate := func() (bool, string) {
		t.Helper()
		wait, why, err := s.gate(ctx, old, nil, now.Add(2*time.Second))
		require.NoError(t, err)
		return wait, why
	}

	wait, why := gate()
	assert.True(t, wait)
	assert.Contains(t, why, "replacement default-new (pending)")

	for _, l := range []state.Lifecycle{state.Launched, state.Registered} {
		_, err = store.UpdateClaim(ctx, "default-new", func(c *state.Claim) error { c.Lifecycle = l; return nil })
		require.NoError(t, err)
		wait, why = gate()
		assert.True(t, wait)
		assert.Contains(t, why, "replacement default-new ("+string(l)+")")
	}
	_, err = store.UpdateClaim(ctx, "default-new", func(c *state.Claim) error { c.Lifecycle = state.Initialized; return nil })
	require.NoError(t, err)
	wait, why = gate()
	assert.False(t, wait, "the replacement initialized: %s", why)

	// A replacement that is deleted before it initialized (its launch failed) no longer holds the drain.
	_, err = store.CreateClaim(ctx, state.Claim{Name: "default-retry", NodePool: "default", Replaces: []string{"default-old"}})
	require.NoError(t, err)
	wait, _ = gate()
	assert.True(t, wait)
	_, err = store.UpdateClaim(ctx, "default-retry", func(c *state.Claim) error { c.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)
	wait, why = gate()
	assert.False(t, wait, "a deleted replacement holds nothing: %s", why)

	require.NotEmpty(t, recorded.seen)
	for _, q := range recorded.seen {
		assert.Equal(t, "pk REPLACEDBY#default-old", q, "the gate queries only the drain's replacement markers")
		assert.False(t, strings.HasPrefix(q, "pk CLAIM"), q)
	}
}
