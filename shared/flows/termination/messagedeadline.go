package termination

import (
	"context"
	"time"
)

// DefaultMessageTimeout bounds the work on one message inside an invocation. A drain step is a few
// round trips (the claim, the Node, its pods, some evictions); one that takes longer is stuck on a slow
// API server or table, and is better looked at again by a fresh delivery than left to eat the batch's
// time: with 4 messages at once, a 60 s invocation works through its batch of 10 in three rounds.
const DefaultMessageTimeout = 20 * time.Second

// messageContext is the context one message's steps run under: cancelled MessageTimeout after it starts
// or Retry.Reserve before the invocation's deadline, whichever comes first. The reserve is left for the
// message's re-drive, so a step cut short never takes its message down with the invocation (it would
// come back only after the queue's 6-minute visibility timeout).
func (s *Service) messageContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		inner, cancelInner := context.WithDeadline(ctx, d.Add(-s.cfg.Retry.Reserve))
		step, cancelStep := context.WithTimeout(inner, s.cfg.MessageTimeout)
		return step, func() { cancelStep(); cancelInner() }
	}
	return context.WithTimeout(ctx, s.cfg.MessageTimeout)
}

// cutShort reports whether a step failed because its message's own deadline passed while the invocation
// still has time: its message is re-driven at once rather than left to SQS.
func cutShort(ctx, stepCtx context.Context) bool {
	return stepCtx.Err() != nil && ctx.Err() == nil
}
