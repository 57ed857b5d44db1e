package termination

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// DrainedAtAttribute is the message attribute a re-driven request carries once its Node was found
// drained (RFC 3339), bounding the wait for volumes to detach across deliveries.
const DrainedAtAttribute = "drainedAt"

// maxDelaySeconds is the longest DelaySeconds SQS accepts.
const maxDelaySeconds = 900

// redriveDelay is how long to wait before the next look at an unfinished drain: progress while pods
// are leaving, and growing from it towards blocked while nothing moves, but never later than the next
// deadline-driven deletion.
func redriveDelay(progressing bool, attempt int, nextDeadlineDelete, now time.Time, progress, blocked time.Duration) time.Duration {
	delay := progress
	if !progressing {
		for i := 1; i < attempt && delay < blocked; i++ {
			delay *= 2
		}
		delay = min(delay, blocked)
	}
	if !nextDeadlineDelete.IsZero() {
		delay = min(delay, nextDeadlineDelete.Sub(now))
	}
	return max(delay, 0)
}

// delaySeconds rounds up to SQS's whole seconds, so a request never comes back before it is due.
func delaySeconds(d time.Duration) int32 {
	return int32(min(math.Ceil(d.Seconds()), maxDelaySeconds))
}

// redrive sends the request back to the termination queue with the next attempt number and a delay.
func (s *Service) redrive(ctx context.Context, in delivery, out outcome) error {
	next := in.req
	next.Attempt = max(in.req.Attempt, 1) + 1
	body, err := next.Body()
	if err != nil {
		return err
	}
	msg := &sqs.SendMessageInput{QueueUrl: aws.String(s.cfg.QueueURL), MessageBody: aws.String(body),
		DelaySeconds: delaySeconds(out.delay)}
	if !out.drainedAt.IsZero() {
		msg.MessageAttributes = map[string]sqstypes.MessageAttributeValue{DrainedAtAttribute: {
			DataType: aws.String("String"), StringValue: aws.String(out.drainedAt.UTC().Format(time.RFC3339Nano))}}
	}
	if _, err := s.deps.Queue.SendMessage(ctx, msg); err != nil {
		return fmt.Errorf("re-driving the termination of claim %s: %w", in.req.Claim, err)
	}
	return nil
}

// drainedAtOf reads DrainedAtAttribute from a delivered message; zero when absent or unreadable (the
// volume wait then starts over, which only lengthens it by one bound).
func drainedAtOf(rec events.SQSMessage) time.Time {
	a, ok := rec.MessageAttributes[DrainedAtAttribute]
	if !ok || a.StringValue == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *a.StringValue)
	if err != nil {
		return time.Time{}
	}
	return t
}
