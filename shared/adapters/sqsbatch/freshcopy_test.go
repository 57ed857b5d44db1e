package sqsbatch

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sent keeps the messages sent.
type sent struct{ in []*sqs.SendMessageInput }

func (s *sent) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	s.in = append(s.in, in)
	return &sqs.SendMessageOutput{}, nil
}

func delivered(receives int, sentAt time.Time, attrs map[string]events.SQSMessageAttribute) events.SQSMessage {
	return events.SQSMessage{MessageId: "m", Body: `{"x":1}`, MessageAttributes: attrs, Attributes: map[string]string{
		"ApproximateReceiveCount": strconv.Itoa(receives), "SentTimestamp": strconv.FormatInt(sentAt.UnixMilli(), 10)}}
}

func TestFreshCopyIsDueFromItsReceiveCountWithinItsHorizon(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	f := FreshCopy{AfterReceives: 3, Horizon: time.Hour}
	cases := []struct {
		name string
		m    events.SQSMessage
		want bool
	}{
		{"below the count", delivered(2, now, nil), false},
		{"at the count", delivered(3, now, nil), true},
		{"a copy of a message first sent within the horizon", delivered(3, now, map[string]events.SQSMessageAttribute{
			FirstSentAttribute: {DataType: "Number", StringValue: aws.String(strconv.FormatInt(now.Add(-59*time.Minute).UnixMilli(), 10))}}), true},
		{"a copy of a message first sent beyond the horizon", delivered(3, now, map[string]events.SQSMessageAttribute{
			FirstSentAttribute: {DataType: "Number", StringValue: aws.String(strconv.FormatInt(now.Add(-61*time.Minute).UnixMilli(), 10))}}), false},
		{"no receive count", events.SQSMessage{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, f.Due(tc.m, now)) })
	}
	assert.True(t, FreshCopy{AfterReceives: 3}.Due(delivered(3, now.Add(-48*time.Hour), nil), now), "no horizon: copied for ever")
}

func TestFreshCopyKeepsBodyAttributesAndFirstSent(t *testing.T) {
	first := time.UnixMilli(1_800_000_000_000)
	q := &sent{}
	m := delivered(3, first, map[string]events.SQSMessageAttribute{"drainedAt": {DataType: "String", StringValue: aws.String("2026-11-27T10:00:00Z")},
		"blob": {DataType: "Binary", BinaryValue: []byte{1}}})
	require.NoError(t, FreshCopy{AfterReceives: 3}.Send(context.Background(), q, "https://queue", m, 1500*time.Millisecond))
	require.Len(t, q.in, 1)
	in := q.in[0]
	assert.Equal(t, `{"x":1}`, aws.ToString(in.MessageBody))
	assert.Equal(t, int32(2), in.DelaySeconds, "rounded up")
	assert.Equal(t, "2026-11-27T10:00:00Z", aws.ToString(in.MessageAttributes["drainedAt"].StringValue))
	assert.Equal(t, strconv.FormatInt(first.UnixMilli(), 10), aws.ToString(in.MessageAttributes[FirstSentAttribute].StringValue))
	assert.NotContains(t, in.MessageAttributes, "blob")
}
