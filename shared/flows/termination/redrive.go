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

	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
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

// redrive sends the request back to the termination queue with the next attempt number and a delay, in
// its chain (a request that starts one names it first: see chain.go).
func (s *Service) redrive(ctx context.Context, in delivery, out outcome) error {
	next := in.req
	next.Attempt = max(in.req.Attempt, 1) + 1
	chain, err := s.chainOf(ctx, in.req)
	if err != nil {
		return err
	}
	next.Chain = chain
	return s.send(ctx, next, out.delay, out.drainedAt)
}

// FreshCopyAfterReceives is the receive count from which a request whose step keeps failing is sent
// again as a fresh message (receive count 1) instead of being left to SQS. Below the termination queue's
// maxReceiveCount (20, infra/queues.go), so a request goes to the dead-letter queue only when even
// sending it again failed that many times: a drain is never abandoned over a transient failure.
const FreshCopyAfterReceives = 3

// freshCopy is how a failing request is copied (sqsbatch.FreshCopy; the interruption queue's notices
// go the same way). A drain is never given up, so the chain has no horizon.
var freshCopy = sqsbatch.FreshCopy{AfterReceives: FreshCopyAfterReceives}

// retryFresh sends a copy of a request whose step failed, with the blocked delay, when it has been
// received FreshCopyAfterReceives times or more; it reports whether it did. The copy is the delivered
// message itself (its attempt number and drainedAt kept): the step did not run, so it must not pass for
// a re-drive of a drain under way.
func (s *Service) retryFresh(ctx context.Context, rec events.SQSMessage) (bool, error) {
	if !freshCopy.Due(rec, s.deps.Now()) {
		return false, nil
	}
	return true, freshCopy.Send(ctx, s.deps.Queue, s.cfg.QueueURL, rec, s.cfg.BlockedDelay)
}

// send puts req on the termination queue with a delay, carrying drainedAt when set.
func (s *Service) send(ctx context.Context, req Request, delay time.Duration, drainedAt time.Time) error {
	body, err := req.Body()
	if err != nil {
		return err
	}
	msg := &sqs.SendMessageInput{QueueUrl: aws.String(s.cfg.QueueURL), MessageBody: aws.String(body),
		DelaySeconds: delaySeconds(delay)}
	if !drainedAt.IsZero() {
		msg.MessageAttributes = map[string]sqstypes.MessageAttributeValue{DrainedAtAttribute: {
			DataType: aws.String("String"), StringValue: aws.String(drainedAt.UTC().Format(time.RFC3339Nano))}}
	}
	if _, err := s.deps.Queue.SendMessage(ctx, msg); err != nil {
		return fmt.Errorf("re-driving the termination of claim %s: %w", req.Claim, err)
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
