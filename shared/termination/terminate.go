package termination

import (
	"context"
	"errors"
	"fmt"

	"github.com/nodewright/nodewright/shared/state"
)

// terminate moves the claim to terminating, terminates its instance, deletes its Node, releases its
// disruption-budget slot and moves the claim to deleted. It comes back later (not finished) while EC2 still reports a live instance for the claim,
// so a Node is never deleted under a running kubelet that would register it again.
func (s *Service) terminate(ctx context.Context, claim state.Claim, req Request) (outcome, error) {
	if claim.Lifecycle == state.Deleted {
		return finishedAsGone, nil
	}
	claim, moved, err := s.move(ctx, claim.Name, state.Terminating, func(c *state.Claim) {
		if c.DisruptionReason == "" {
			c.DisruptionReason = req.Reason
		}
	})
	if errors.Is(err, errCannotMove) {
		return finishedAsGone, nil // only a deleted claim cannot become terminating
	}
	if err != nil {
		return outcome{}, err
	}
	if moved {
		if err := s.decide(ctx, claim.Name, "Terminating", req, "terminating instance "+claim.InstanceID, nil); err != nil {
			return outcome{}, err
		}
	}
	if claim.InstanceID != "" {
		if err := s.deps.Instances.Terminate(ctx, claim.InstanceID); err != nil {
			return outcome{}, err
		}
	}
	// Also an instance the claim's record does not name (a launch retried after a lost answer).
	live, found, err := s.deps.Instances.FindByClaim(ctx, claim.Name)
	if err != nil {
		return outcome{}, err
	}
	if found {
		if err := s.deps.Instances.Terminate(ctx, live.ID); err != nil {
			return outcome{}, err
		}
		return outcome{delay: s.cfg.ProgressDelay}, nil
	}
	if claim.NodeName != "" {
		if err := s.deps.Actions.DeleteNode(ctx, claim.NodeName); err != nil {
			return outcome{}, err
		}
	}
	// The disruption's budget slot is held until the node is gone; released before the claim is marked
	// deleted, so a failure here is retried by the next delivery rather than forgotten.
	if err := s.deps.Store.ReleaseDisruption(ctx, claim.NodePool, claim.Name); err != nil {
		return outcome{}, err
	}
	claim, moved, err = s.move(ctx, claim.Name, state.Deleted, nil)
	if err != nil {
		return outcome{}, err
	}
	if moved {
		msg := fmt.Sprintf("instance %s terminated and node %s deleted", claim.InstanceID, claim.NodeName)
		if err := s.decide(ctx, claim.Name, "Deleted", req, msg, nil); err != nil {
			return outcome{}, err
		}
	}
	out := outcome{finished: true, note: "claim terminated"}
	if moved {
		out.stats = stepStats{terminated: true, took: max(s.deps.Now().Sub(req.RequestedAt), 0)}
	}
	return out, nil
}
