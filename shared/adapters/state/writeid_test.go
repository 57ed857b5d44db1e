package state

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lostAnswers sends every PutItem twice and returns the second answer, as the SDK's retryer does when the
// first attempt succeeded but its answer was lost on the way back.
type lostAnswers struct{ DynamoDB }

func (l lostAnswers) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if _, err := l.DynamoDB.PutItem(ctx, in, optFns...); err != nil {
		return nil, err
	}
	return l.DynamoDB.PutItem(ctx, in, optFns...)
}

func TestARetriedWriteIsRecognisedAsItsOwn(t *testing.T) {
	ctx := context.Background()
	direct, _ := newStore(t)
	s := New(lostAnswers{direct.db}, direct.table, WithClock(direct.now))

	c, err := s.CreateClaim(ctx, Claim{Name: "c1", NodePool: "default"})
	require.NoError(t, err, "the retry found the claim its own first attempt created")
	assert.Equal(t, int64(1), c.Version)

	c, err = s.UpdateClaim(ctx, "c1", func(c *Claim) error { c.Lifecycle = Launched; return nil })
	require.NoError(t, err, "the retry found the version its own first attempt wrote")
	assert.Equal(t, int64(2), c.Version, "updated once, not re-read and applied again")
	stored, err := direct.GetClaim(ctx, "c1")
	require.NoError(t, err)
	assert.Equal(t, c.WriteID, stored.WriteID)
	assert.Equal(t, Launched, stored.Lifecycle)

	cmd, err := s.CreateDisruptionCommand(ctx, DisruptionCommand{ID: "cmd-1", Phase: CommandLaunching})
	require.NoError(t, err)
	cmd.Phase = CommandTerminating
	cmd, err = s.PutDisruptionCommand(ctx, cmd)
	require.NoError(t, err)
	assert.Equal(t, int64(2), cmd.Version)
}

func TestAnotherWritersItemIsStillACollision(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	first, err := s.CreateClaim(ctx, Claim{Name: "c1", NodePool: "a"})
	require.NoError(t, err)
	_, err = s.CreateClaim(ctx, Claim{Name: "c1", NodePool: "b"})
	assert.True(t, IsAlreadyExists(err), "a create by someone else is not ours: %v", err)

	next := first
	next.Zone = "us-east-1a"
	_, err = s.PutClaim(ctx, first, next)
	require.NoError(t, err)
	_, err = s.PutClaim(ctx, first, next) // a stale writer with its own, new write id
	assert.True(t, IsConflict(err), "a put on a version someone else wrote conflicts: %v", err)

	_, err = s.CreateDisruptionCommand(ctx, DisruptionCommand{ID: "cmd-1", Phase: CommandLaunching})
	require.NoError(t, err)
	_, err = s.CreateDisruptionCommand(ctx, DisruptionCommand{ID: "cmd-1", Phase: CommandLaunching})
	assert.True(t, IsAlreadyExists(err), "%v", err)
}

func (l lostAnswers) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if _, err := l.DynamoDB.TransactWriteItems(ctx, in, optFns...); err != nil {
		return nil, err
	}
	return l.DynamoDB.TransactWriteItems(ctx, in, optFns...)
}

func TestARetriedClaimTransactionIsRecognisedAsItsOwn(t *testing.T) {
	ctx := context.Background()
	direct, _ := newStore(t)
	s := New(lostAnswers{direct.db}, direct.table, WithClock(direct.now))
	created, err := s.CreateClaims(ctx, []Claim{{Name: "a", NodePool: "p"}, {Name: "b", NodePool: "p"}})
	require.NoError(t, err)
	next := append([]Claim(nil), created...)
	for i := range next {
		next[i].Lifecycle = Launched
	}
	put, err := s.PutClaims(ctx, created, next)
	require.NoError(t, err)
	for _, c := range put {
		stored, err := direct.GetClaim(ctx, c.Name)
		require.NoError(t, err)
		assert.Equal(t, int64(2), stored.Version)
		assert.Equal(t, c.WriteID, stored.WriteID)
	}
}
