package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/faults"
)

// BatchHandler is a function's SQS handler: it returns the messages that failed (Lambda's partial batch
// response); every other message of the batch is deleted.
type BatchHandler func(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse

// eventSource polls one queue the way a Lambda event source mapping does: up to ten messages per batch,
// one invocation at a time, each under the function's timeout; acknowledged messages are deleted and
// failed ones come back after the visibility timeout. moto serialises requests, so it short-polls.
type eventSource struct {
	name, queueURL string
	sqs            *sqs.Client
	handle         BatchHandler
	timeout, idle  time.Duration
	onError        func(error)
}

func (s *eventSource) run(ctx context.Context) {
	// Lambda's event source mapping polls with the function's own role, so its calls count as the function's.
	ctx = awscalls.WithFunction(ctx, s.name)
	for ctx.Err() == nil {
		n, err := s.once(ctx)
		if err != nil && ctx.Err() == nil {
			s.onError(err)
		}
		if n == 0 || err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(s.idle):
			}
		}
	}
}

// once receives one batch, invokes the handler and deletes what it acknowledged.
func (s *eventSource) once(ctx context.Context) (int, error) {
	// The poller is Lambda's, not the function's code: the fault layer leaves its calls alone.
	out, err := s.sqs.ReceiveMessage(faults.Exempt(ctx), &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.queueURL), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"}})
	if err != nil || len(out.Messages) == 0 {
		return 0, err
	}
	ev := events.SQSEvent{}
	for _, m := range out.Messages {
		// Message attributes as Lambda delivers them (a re-driven drain's drainedAt, a fresh copy's age).
		attrs := map[string]events.SQSMessageAttribute{}
		for name, a := range m.MessageAttributes {
			attrs[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
		}
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: attrs, EventSource: "aws:sqs", EventSourceARN: s.queueURL,
			AWSRegion: "us-east-1"})
	}
	ictx, cancel := context.WithTimeout(ctx, s.timeout)
	res := s.invoke(ictx, ev)
	cancel()
	failed := map[string]bool{}
	for _, f := range res.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var done []sqstypes.DeleteMessageBatchRequestEntry
	for i, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			done = append(done, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(done) > 0 {
		if _, err := s.sqs.DeleteMessageBatch(faults.Exempt(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.queueURL), Entries: done}); err != nil {
			return len(out.Messages), fmt.Errorf("%s: deleting acknowledged messages: %w", s.name, err)
		}
	}
	return len(out.Messages), nil
}

// invoke runs the handler; a panic is a crashed invocation, as Lambda reports it: the whole batch comes
// back after the visibility timeout.
func (s *eventSource) invoke(ctx context.Context, ev events.SQSEvent) (res events.SQSEventResponse) {
	defer func() {
		if r := recover(); r != nil {
			s.onError(fmt.Errorf("%s: invocation crashed: %v", s.name, r))
			res = events.SQSEventResponse{}
			for _, m := range ev.Records {
				res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
	}()
	return s.handle(ctx, ev)
}
