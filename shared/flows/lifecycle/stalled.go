package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ReasonDrainStalled is the decision reason when the lifecycle sends a stalled claim's termination again.
const ReasonDrainStalled = "DrainStalled"

// stalledFor says how long c has been draining or terminating, and whether its termination looks lost:
// it entered that state at least StallAfter ago and the lifecycle has not handed it over within
// resendInterval (see handover.go for why these bounds). Claims in service or deleted never stall.
func stalledFor(c state.Claim, now time.Time) (time.Duration, bool) {
	var since *time.Time
	switch c.Lifecycle {
	case state.Draining:
		since = c.DrainingAt
	case state.Terminating:
		since = c.TerminatingAt
	default:
		return 0, false
	}
	start := c.CreatedAt // a record from before the lifecycle timestamps: as old as the claim
	if since != nil {
		start = *since
	}
	age := now.Sub(start)
	return age, age >= StallAfter && handOverDue(c, now)
}

// resendStalled hands every stalled claim to the termination flow again, with the reason it was
// disrupted for, and records how long it has waited and which hand-over this is.
func (p *passState) resendStalled(ctx context.Context) {
	now := p.r.deps.Now()
	for _, c := range p.w.claims {
		if p.lifecycle[c.Name] != c.Lifecycle {
			continue // this pass moved it
		}
		age, ok := stalledFor(c, now)
		if !ok {
			continue
		}
		reason := c.DisruptionReason
		if reason == "" {
			reason = ReasonDrainStalled
		}
		age = age.Round(time.Second)
		msg := fmt.Sprintf("NodeClaim %s has been %s for %s without finishing; its termination (%s) is requested again, hand-over %d",
			c.Name, c.Lifecycle, age, reason, c.TerminationSends+1)
		p.handOver(ctx, c, reason, ReasonDrainStalled, msg, map[string]string{"age": age.String(), "node": c.NodeName,
			"instanceId": c.InstanceID})
	}
}
