package termination

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// MessageSender is the part of SQS a Sender uses; *sqs.Client satisfies it.
type MessageSender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ MessageSender = (*sqs.Client)(nil)

// Sender puts termination requests on the termination queue, for those that decide a node must go
// (the lifecycle's repairs, disruption) but never drain or terminate it themselves.
type Sender struct {
	queue    MessageSender
	queueURL string
}

// NewSender returns a sender to the termination queue at queueURL.
func NewSender(queue MessageSender, queueURL string) *Sender {
	return &Sender{queue: queue, queueURL: queueURL}
}

// Send validates req and sends it. Sending the same claim twice is harmless: the termination flow is
// idempotent per claim, and a request for a claim already deleted finishes at once.
func (s *Sender) Send(ctx context.Context, req Request) error {
	body, err := req.Body()
	if err != nil {
		return err
	}
	if _, err := s.queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.queueURL), MessageBody: aws.String(body)}); err != nil {
		return fmt.Errorf("sending the termination request for claim %s: %w", req.Claim, err)
	}
	return nil
}
