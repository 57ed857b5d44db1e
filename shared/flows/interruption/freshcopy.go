package interruption

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
)

// FreshCopyAfterReceives is the receive count from which a notice that still failed is sent again as a
// fresh message instead of being left to SQS: below the interruption queue's maxReceiveCount (5,
// infra/queues.go), so an outage of the state table or the API server that outlasts a few receives —
// they come back after 2, 4, 8 … 30 s — delays a notice but does not dead-letter it. A lost AWS Health
// scheduled change would retire its instance without a drain.
const FreshCopyAfterReceives = 3

// FreshCopyHorizon bounds a notice's chain of copies: one first sent longer ago is left to SQS and, in
// the end, to the interruption dead-letter queue (alarmed, kept 14 days), not copied for ever.
const FreshCopyHorizon = time.Hour

// freshCopy is how a failing notice is copied: the termination queue's mechanism (sqsbatch.FreshCopy).
var freshCopy = sqsbatch.FreshCopy{AfterReceives: FreshCopyAfterReceives, Horizon: FreshCopyHorizon}

// copyTimeout bounds the copies' sends: they run when the invocation's own context may be spent.
const copyTimeout = 2 * time.Second

// copyFresh sends a fresh copy of each failed message that is due one (freshCopy), visible again after
// the time a requeue would have given it, and returns the messages still failed: those not due and those
// whose copy SQS refused.
func (s *Service) copyFresh(ctx context.Context, failed []events.SQSMessage, stats *BatchStats) []events.SQSMessage {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), copyTimeout)
	defer cancel()
	now := s.deps.Now()
	var left []events.SQSMessage
	for _, m := range failed {
		if !freshCopy.Due(m, now) {
			left = append(left, m)
			continue
		}
		url, err := sqsbatch.QueueURL(m)
		if err == nil {
			err = freshCopy.Send(ctx, s.deps.Queue, url, m, s.cfg.Retry.Visibility(sqsbatch.ReceiveCount(m)))
		}
		if err != nil {
			s.deps.Log.ErrorContext(ctx, "sending a fresh copy of a failing notice failed; SQS delivers it again",
				"messageId", m.MessageId, "error", err.Error())
			left = append(left, m)
			continue
		}
		s.deps.Log.WarnContext(ctx, "the notice keeps failing; a fresh copy is sent", "messageId", m.MessageId,
			"receives", sqsbatch.ReceiveCount(m))
		stats.Copied++
	}
	return left
}
