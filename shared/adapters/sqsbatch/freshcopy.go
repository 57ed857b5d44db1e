package sqsbatch

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// MessageSender sends one SQS message; *sqs.Client satisfies it.
type MessageSender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ MessageSender = (*sqs.Client)(nil)

// FirstSentAttribute is the message attribute a fresh copy carries: when the first copy of the message
// was sent (Unix milliseconds), so a chain of copies still knows its age.
const FirstSentAttribute = "nodewrightFirstSent"

// maxDelaySeconds is the longest DelaySeconds SQS accepts.
const maxDelaySeconds = 900

// FreshCopy is how a message whose handling keeps failing for a transient reason is kept out of the
// dead-letter queue: from its AfterReceives-th receive it is sent again as a new message (receive count
// 1) and the delivered one acknowledged, so only a failure of SQS itself, AfterReceives times below the
// queue's maxReceiveCount, dead-letters it. An outage of the state table or the API server that outlasts
// a few receives therefore delays the message but does not lose it.
type FreshCopy struct {
	// AfterReceives is the receive count from which a failed message is copied (required, > 0).
	AfterReceives int
	// Horizon bounds a chain of copies: a message first sent longer ago is left to SQS (and so, in the
	// end, to the alarmed dead-letter queue) instead of being copied forever. Zero: no bound.
	Horizon time.Duration
}

// ReceiveCount is how many times SQS delivered m (its ApproximateReceiveCount; 0 when unknown).
func ReceiveCount(m events.SQSMessage) int {
	n, err := strconv.Atoi(m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)])
	if err != nil {
		return 0
	}
	return n
}

// Due reports whether m, whose handling failed, should be sent again as a fresh copy at now.
func (f FreshCopy) Due(m events.SQSMessage, now time.Time) bool {
	if f.AfterReceives <= 0 || ReceiveCount(m) < f.AfterReceives {
		return false
	}
	first, ok := firstSent(m)
	return f.Horizon <= 0 || !ok || now.Sub(first) <= f.Horizon
}

// Send puts a copy of m — its body, its string and number message attributes, and when it was first
// sent — on queueURL, visible after delay (at most SQS's 15 minutes). FIFO queues are not supported:
// a copy would need a group and deduplication id of its own.
func (f FreshCopy) Send(ctx context.Context, q MessageSender, queueURL string, m events.SQSMessage, delay time.Duration) error {
	attrs := map[string]sqstypes.MessageAttributeValue{}
	for name, a := range m.MessageAttributes {
		if a.StringValue != nil && (a.DataType == "String" || a.DataType == "Number") {
			attrs[name] = sqstypes.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue}
		}
	}
	if first, ok := firstSent(m); ok {
		attrs[FirstSentAttribute] = sqstypes.MessageAttributeValue{DataType: aws.String("Number"),
			StringValue: aws.String(strconv.FormatInt(first.UnixMilli(), 10))}
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(m.Body), DelaySeconds: DelaySeconds(delay)}
	if len(attrs) > 0 {
		in.MessageAttributes = attrs
	}
	if _, err := q.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("sending a fresh copy of message %s: %w", m.MessageId, err)
	}
	return nil
}

// DelaySeconds rounds d up to SQS's whole seconds, at most 15 minutes, so a message never comes back
// before it is due.
func DelaySeconds(d time.Duration) int32 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return int32(max(min(s, maxDelaySeconds), 0))
}

// firstSent is when the first copy of m was sent: its FirstSentAttribute, else its SentTimestamp.
func firstSent(m events.SQSMessage) (time.Time, bool) {
	if a, ok := m.MessageAttributes[FirstSentAttribute]; ok && a.StringValue != nil {
		if ms, err := strconv.ParseInt(*a.StringValue, 10, 64); err == nil {
			return time.UnixMilli(ms), true
		}
	}
	if ms, err := strconv.ParseInt(m.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil && ms > 0 {
		return time.UnixMilli(ms), true
	}
	return time.Time{}, false
}
