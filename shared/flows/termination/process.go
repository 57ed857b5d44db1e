package termination

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// delivery is one request as it arrived.
type delivery struct {
	req Request
	// drainedAt is when an earlier delivery found the node drained (zero: not yet); re-drives carry it
	// so the wait for volumes to detach stays bounded.
	drainedAt time.Time
}

// outcome is what one delivery achieved.
type outcome struct {
	// finished: nothing is left to do for this request (the claim is gone, or never was).
	finished bool
	// note says why, for the log.
	note string
	// delay is how long to wait before the next look when not finished.
	delay time.Duration
	// drainedAt carries the moment the node was found drained to the next delivery.
	drainedAt time.Time
	// nodePool is the claim's NodePool and stats what this delivery did, for metrics.
	nodePool string
	stats    stepStats
}

var (
	errUnchanged   = errors.New("claim already in that lifecycle state")
	errCannotMove  = errors.New("lifecycle move not allowed")
	finishedAsGone = outcome{finished: true, note: "claim not found or already deleted; nothing to terminate"}
)

// process takes the claim one delivery further: draining (taint, label, evict or delete per the plan),
// then, once drained and the volumes detached, terminating (instance, Node) and deleted. Every step is
// idempotent, so a delivery repeated after a failure anywhere converges.
func (s *Service) process(ctx context.Context, in delivery) (outcome, error) {
	claim, err := s.deps.Store.GetClaim(ctx, in.req.Claim)
	if state.IsNotFound(err) {
		return finishedAsGone, nil
	}
	if err != nil {
		return outcome{}, err
	}
	if superseded(claim, in.req) {
		return outcome{finished: true, note: "a newer termination request of the claim took over; this chain ends"}, nil
	}
	switch claim.Lifecycle {
	case state.Deleted:
		return finishedAsGone, nil
	case state.Launched, state.Registered, state.Initialized:
		if in.req.Attempt > 1 {
			// A re-drive finds the claim back in service: the disruption that asked for it called the
			// drain off (draining → initialized). Starting it again would undo that.
			return outcome{finished: true, note: "the drain was called off; the claim is back in service"}, nil
		}
	}
	// A Node that exists is always drained before its instance is terminated, found by its provider id
	// when the claim does not name it yet.
	if claim, err = s.withNode(ctx, claim); err != nil {
		return outcome{}, err
	}
	if claim.NodeName != "" && claim.Lifecycle.CanMoveTo(state.Draining) {
		if claim, err = s.startDraining(ctx, claim, in.req); err != nil {
			return outcome{}, err
		}
	}
	var drainStats stepStats
	if claim.Lifecycle == state.Draining {
		out, err := s.drain(ctx, claim, in)
		if err != nil || !out.finished {
			out.nodePool = claim.NodePool
			return out, err
		}
		drainStats = out.stats
	}
	out, err := s.terminate(ctx, claim, in.req)
	out.nodePool = claim.NodePool
	out.stats.add(drainStats)
	return out, err
}

// startDraining moves the claim to draining with the request's reason, unless it is there already.
func (s *Service) startDraining(ctx context.Context, claim state.Claim, req Request) (state.Claim, error) {
	if claim.Lifecycle == state.Draining {
		return claim, nil
	}
	updated, moved, err := s.move(ctx, claim.Name, state.Draining, func(c *state.Claim) { c.DisruptionReason = req.Reason })
	if errors.Is(err, errCannotMove) { // someone moved it on meanwhile (terminating, deleted): go from there
		return s.deps.Store.GetClaim(ctx, claim.Name)
	}
	if err != nil {
		return state.Claim{}, err
	}
	if moved {
		err = s.decide(ctx, updated.Name, "Draining", req, fmt.Sprintf("draining node %s: tainting %s:NoSchedule and evicting its pods",
			updated.NodeName, disruptedTaint.Key), nil)
		// The provisioner sees a draining claim's pods as pending; a failed wake-up only means the drain
		// waits for its schedule, so it is logged, not retried.
		if werr := s.wakeProvisioner(ctx, updated.Name, req.Reason, aws.ToTime(updated.DrainingAt)); werr != nil {
			s.log.WarnContext(ctx, "waking the provisioner", "claim", updated.Name, "error", werr.Error())
		}
	}
	return updated, err
}

// move sets the claim's lifecycle to next (applying also, when not nil) and reports whether this call
// moved it. A claim already in next is returned as it is; one that cannot move there is an error.
func (s *Service) move(ctx context.Context, name string, next state.Lifecycle, also func(*state.Claim)) (state.Claim, bool, error) {
	c, err := s.deps.Store.UpdateClaim(ctx, name, func(c *state.Claim) error {
		if c.Lifecycle == next {
			return errUnchanged
		}
		if !c.Lifecycle.CanMoveTo(next) {
			return fmt.Errorf("claim %s is %s and cannot become %s: %w", name, c.Lifecycle, next, errCannotMove)
		}
		c.Lifecycle = next
		if also != nil {
			also(c)
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		c, err = s.deps.Store.GetClaim(ctx, name)
		return c, false, err
	}
	if err != nil {
		return state.Claim{}, false, fmt.Errorf("moving claim %s to %s: %w", name, next, err)
	}
	return c, true, nil
}
