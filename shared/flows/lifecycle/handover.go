package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// Timing of the lifecycle's hand-overs to the termination flow.
//
// A request on the termination queue is looked at again at least every 30 s while its drain is blocked
// (termination.Config.BlockedDelay; 5 s while pods leave, at most SQS's 900 s delay), and a delivery that
// failed comes back after the queue's 6-minute visibility timeout. A claim that has sat draining or
// terminating for StallAfter — more than two visibility timeouts plus the longest re-drive delay — with no
// hand-over from the lifecycle in that time has most likely lost its request (a send that failed after
// the claim moved, a message dead-lettered after its receives ran out), so it is sent again. A drain that
// is merely slow (a PDB that holds for hours) then gets a second request, which is harmless — every
// termination step is idempotent per claim — but costs a Lambda run every re-drive; so each further
// re-send of the same claim waits twice as long, up to MaxResendInterval.
const (
	StallAfter        = 15 * time.Minute
	MaxResendInterval = 4 * time.Hour
)

// resendInterval is how long after the lifecycle's last hand-over of a claim (sends so far) it may hand
// the claim over again: StallAfter, doubled for every hand-over after the first, at most MaxResendInterval.
func resendInterval(sends int) time.Duration {
	d := StallAfter
	for i := 1; i < sends && d < MaxResendInterval; i++ {
		d *= 2
	}
	return min(d, MaxResendInterval)
}

// handOverDue reports whether the lifecycle may hand c over now: never before, or longer ago than
// resendInterval.
func handOverDue(c state.Claim, now time.Time) bool {
	return c.TerminationSentAt == nil || now.Sub(*c.TerminationSentAt) >= resendInterval(c.TerminationSends)
}

// errClaimChanged abandons a hand-over: the claim moved, or another pass handed it over, since this pass
// read it.
var errClaimChanged = errors.New("claim changed since the pass read it")

// handOver sends c to the termination flow with reason (the request's; the drain is labelled with it) and
// records decisionReason and message. The claim is marked first, conditionally on the lifecycle this pass
// left it in and on the last hand-over this pass read, so of two overlapping passes only one sends; a
// failed send takes the mark back so the next pass tries again.
func (p *passState) handOver(ctx context.Context, c state.Claim, reason, decisionReason, message string, details map[string]string) bool {
	subject := "nodeclaim/" + c.Name
	if p.sent[c.Name] {
		return false
	}
	if p.r.deps.Terminations == nil {
		p.fail(subject, errors.New("no termination queue is wired to hand the claim to"))
		return false
	}
	now := p.r.deps.Now().UTC()
	marked, err := p.r.deps.Store.UpdateClaim(ctx, c.Name, func(cur *state.Claim) error {
		if cur.Lifecycle != p.lifecycle[c.Name] || !sameTime(cur.TerminationSentAt, c.TerminationSentAt) {
			return errClaimChanged
		}
		cur.TerminationSentAt, cur.TerminationSends = &now, cur.TerminationSends+1
		return nil
	})
	if errors.Is(err, errClaimChanged) {
		return false
	}
	if err != nil {
		p.fail(subject, fmt.Errorf("marking the hand-over to termination: %w", err))
		return false
	}
	req := termination.Request{Claim: c.Name, Reason: reason, Deadline: c.GoneBy, RequestedAt: requestedAt(c, now)}
	if err := p.r.deps.Terminations.Send(ctx, req); err != nil {
		p.fail(subject, err)
		p.unmark(ctx, c, now)
		return false
	}
	p.sent[c.Name] = true
	p.rep.HandedOver++
	d := map[string]string{"reason": reason, "attempt": strconv.Itoa(marked.TerminationSends), "lifecycle": string(marked.Lifecycle)}
	for k, v := range details {
		d[k] = v
	}
	p.decide(ctx, subject, "TerminationRequested", decisionReason, message, d)
	return true
}

// unmark takes back a hand-over mark whose request could not be sent, if it is still this pass's.
func (p *passState) unmark(ctx context.Context, c state.Claim, mark time.Time) {
	_, err := p.r.deps.Store.UpdateClaim(ctx, c.Name, func(cur *state.Claim) error {
		if !sameTime(cur.TerminationSentAt, &mark) {
			return errClaimChanged
		}
		cur.TerminationSentAt, cur.TerminationSends = c.TerminationSentAt, c.TerminationSends
		return nil
	})
	if err != nil && !errors.Is(err, errClaimChanged) {
		p.fail("nodeclaim/"+c.Name, fmt.Errorf("taking back the hand-over mark: %w", err))
	}
}

// requestedAt is when the claim's termination was first asked for, as far as the claim tells: when it
// entered draining or terminating, else (a claim still in service) now.
func requestedAt(c state.Claim, now time.Time) time.Time {
	switch {
	case c.Lifecycle == state.Draining && c.DrainingAt != nil:
		return *c.DrainingAt
	case c.Lifecycle == state.Terminating && c.TerminatingAt != nil:
		return *c.TerminatingAt
	}
	return now
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
