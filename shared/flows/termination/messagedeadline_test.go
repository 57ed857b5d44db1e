package termination

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// stuckStore is a claimStore whose reads of one claim hang until the caller's context ends, as a read
// from a table or API server that stopped answering does.
type stuckStore struct {
	*claimStore
	stuck string
}

func (s *stuckStore) GetClaim(ctx context.Context, name string) (state.Claim, error) {
	if name == s.stuck {
		<-ctx.Done()
		return state.Claim{}, ctx.Err()
	}
	return s.claimStore.GetClaim(ctx, name)
}

// TestASlowMessageIsRedrivenWithinTheInvocation: a message whose steps hang is cut off at its own
// deadline and sent again while the invocation still runs, beside a message that finished; nothing waits
// for the invocation's end, after which it would come back only with the queue's visibility timeout.
func TestASlowMessageIsRedrivenWithinTheInvocation(t *testing.T) {
	const (
		slow = `{"claim":"default-slow","reason":"Interrupted","requestedAt":"2026-11-22T12:00:00Z","attempt":2}`
		fast = `{"claim":"default-gone","reason":"Drifted","requestedAt":"2026-11-22T12:00:00Z"}`
	)
	q := &sentMessages{}
	var logs bytes.Buffer
	// The steps stop Retry.Reserve (10 s) before the invocation's deadline (12 s away), leaving the
	// reserve to send the message again; the old handler's steps ran until the deadline itself.
	s := NewService(Config{QueueURL: "http://queue", Retry: sqsbatch.Policy{Reserve: 10 * time.Second},
		Log: slog.New(slog.NewJSONHandler(&logs, nil))},
		Deps{Store: &stuckStore{claimStore: &claimStore{}, stuck: "default-slow"}, Queue: q})
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()

	resp, stats := s.Handle(ctx, batch(slow, fast))
	require.NoError(t, ctx.Err(), "the batch is answered while the invocation still runs")
	assert.Empty(t, resp.BatchItemFailures, "both are acknowledged: one done, one sent again")
	assert.Equal(t, 1, stats.Redriven)
	require.Len(t, q.sent, 1)
	assert.Equal(t, "http://queue", aws.ToString(q.sent[0].QueueUrl))
	again, err := ParseRequest(aws.ToString(q.sent[0].MessageBody))
	require.NoError(t, err)
	assert.Equal(t, "default-slow", again.Claim)
	assert.Equal(t, 2, again.Attempt, "the step did not finish: the copy keeps its attempt")
	assert.Contains(t, logs.String(), "ran out of time")
}

// TestOneSlowMessageDoesNotHoldTheBatch: a message's steps stop MessageTimeout after they start, long
// before the invocation's deadline, and the message is sent again.
func TestOneSlowMessageDoesNotHoldTheBatch(t *testing.T) {
	q := &sentMessages{}
	s := NewService(Config{QueueURL: "http://queue", MessageTimeout: time.Second},
		Deps{Store: &stuckStore{claimStore: &claimStore{}, stuck: "default-slow"}, Queue: q})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	resp, stats := s.Handle(ctx, batch(`{"claim":"default-slow","reason":"Interrupted","requestedAt":"2026-11-22T12:00:00Z"}`))
	require.NoError(t, ctx.Err())
	assert.Empty(t, resp.BatchItemFailures)
	assert.Equal(t, 1, stats.Redriven)
	assert.Len(t, q.sent, 1)
}

// TestMessageStepsStopBeforeTheInvocationDeadline: without a shorter MessageTimeout a message's steps
// stop Retry.Reserve before the invocation's deadline, leaving that reserve to send it again.
func TestMessageStepsStopBeforeTheInvocationDeadline(t *testing.T) {
	s := NewService(Config{QueueURL: "http://queue", MessageTimeout: time.Hour}, Deps{Store: &claimStore{}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	invocation, _ := ctx.Deadline()
	stepCtx, stop := s.messageContext(ctx)
	defer stop()
	step, ok := stepCtx.Deadline()
	require.True(t, ok)
	assert.Equal(t, invocation.Add(-s.cfg.Retry.Reserve), step)
}
