package termination

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingQueue keeps what was sent, or fails every send with err.
type recordingQueue struct {
	sent []*sqs.SendMessageInput
	err  error
}

func (q *recordingQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if q.err != nil {
		return nil, q.err
	}
	q.sent = append(q.sent, in)
	return &sqs.SendMessageOutput{}, nil
}

func TestSenderSendsAValidRequestToItsQueue(t *testing.T) {
	q := &recordingQueue{}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	require.NoError(t, NewSender(q, "https://sqs/termination").Send(context.Background(),
		Request{Claim: "default-abcde", Reason: "RegistrationTimeout", RequestedAt: at}))
	require.Len(t, q.sent, 1)
	assert.Equal(t, "https://sqs/termination", aws.ToString(q.sent[0].QueueUrl))
	got, err := ParseRequest(aws.ToString(q.sent[0].MessageBody))
	require.NoError(t, err)
	assert.Equal(t, Request{Claim: "default-abcde", Reason: "RegistrationTimeout", RequestedAt: at}, got)
}

func TestSenderRejectsAnInvalidRequestAndWrapsQueueErrors(t *testing.T) {
	q := &recordingQueue{}
	err := NewSender(q, "u").Send(context.Background(), Request{Claim: "c", RequestedAt: time.Now()})
	assert.ErrorContains(t, err, "reason is required")
	assert.Empty(t, q.sent)

	q.err = errors.New("throttled")
	err = NewSender(q, "u").Send(context.Background(), Request{Claim: "c", Reason: "r", RequestedAt: time.Now()})
	assert.ErrorContains(t, err, "claim c")
	assert.ErrorContains(t, err, "throttled")
}
