package termination

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// terminate moves the claim to terminating, terminates its instance, deletes its Node, releases its
// disruption-budget slot and moves the claim to deleted. It comes back later (not finished) while EC2
// still reports an instance of the claim that is not terminated (shutting down included), so a Node is
// never deleted, nor its pods forgotten, under a kubelet that may still run them.
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
	if claim.InstanceID != "" { // without one, FindByClaim above is all there is to wait for
		if gone, err := s.instanceTerminated(ctx, claim); err != nil || !gone {
			return outcome{delay: s.cfg.ProgressDelay}, err // shutting down: its kubelet may still run pods
		}
	}
	if err := s.removeNode(ctx, claim.NodeName); err != nil {
		return outcome{}, err
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
		// A finished drain may let a consolidation command finish and the next one start; a failed
		// wake-up only means the disruption function waits for its schedule.
		if werr := s.wakeDisruption(ctx, claim.Name, req.Reason); werr != nil {
			s.log.WarnContext(ctx, "waking the disruption function", "claim", claim.Name, "error", werr.Error())
		}
	}
	out := outcome{finished: true, note: "claim terminated"}
	if moved {
		now := s.deps.Now()
		gone := Termination{Zone: claim.Zone, CapacityType: claim.CapacityType, Node: claim.NodeName != ""}
		if gone.Node {
			gone.Lifetime = max(now.Sub(nodeSince(claim)), 0)
		}
		out.stats = stepStats{terminated: true, took: max(now.Sub(req.RequestedAt), 0), gone: gone}
	}
	return out, nil
}

// instanceTerminated reports whether EC2 says the claim's instance is terminated; false when the claim
// names no instance (then nothing says so), and false while EC2 does not know an instance launched moments
// ago (see instance.NotFoundGrace).
func (s *Service) instanceTerminated(ctx context.Context, claim state.Claim) (bool, error) {
	if claim.InstanceID == "" {
		return false, nil
	}
	launched := claim.CreatedAt
	if claim.LaunchedAt != nil {
		launched = *claim.LaunchedAt
	}
	gone, err := s.deps.Instances.Terminated(ctx, claim.InstanceID, launched)
	if err != nil {
		return false, fmt.Errorf("reading the state of instance %s of claim %s: %w", claim.InstanceID, claim.Name, err)
	}
	return gone, nil
}

// removeNode removes the Node of a claim whose instance is terminated: the pods still bound to it are
// force-deleted (nothing runs them any more; their controllers recreate them now rather than after the
// pod garbage collector's wait), Nodewright's finalizer is taken off and the Node deleted — a Node
// someone already deleted (kubectl delete node) then goes as well.
func (s *Service) removeNode(ctx context.Context, node string) error {
	if node == "" {
		return nil
	}
	if _, err := s.deps.Actions.ForgetPods(ctx, node); err != nil {
		return err
	}
	if err := s.deps.Actions.RemoveFinalizer(ctx, node, kube.TerminationFinalizer); err != nil {
		return err
	}
	return s.deps.Actions.DeleteNode(ctx, node)
}

// nodeSince is when the claim's Node joined: its registration, or for a claim that recorded none (rebuilt
// or adopted ones) its launch.
func nodeSince(c state.Claim) time.Time {
	switch {
	case c.RegisteredAt != nil:
		return *c.RegisteredAt
	case c.LaunchedAt != nil:
		return *c.LaunchedAt
	}
	return c.CreatedAt
}
