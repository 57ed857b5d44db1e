package interruption

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// reservedCapacityType is the capacity type of a reservation's offerings.
const reservedCapacityType = "reserved"

// errUnchanged abandons a claim update that has nothing to change.
var errUnchanged = errors.New("claim already as asked")

// act carries out one step for the claim c and returns the claim as it is afterwards and a note for
// the step's decision record (empty when there was nothing to do and nothing is recorded). Every step
// is safe to repeat: it checks what is already true before it changes anything, or its effect is
// idempotent where it lands (a taint, a deleted Node, a FIFO deduplication id).
func (s *Service) act(ctx context.Context, msg messages.Message, d Decision, c state.Claim, step Step) (state.Claim, string, error) {
	reason := DisruptionReason(msg.Kind())
	switch step {
	case MarkOfferingUnavailable:
		if c.InstanceType == "" || c.Zone == "" {
			return c, "", nil
		}
		o := state.Offering{InstanceType: c.InstanceType, Zone: c.Zone, CapacityType: c.CapacityType}
		if err := s.deps.State.MarkUnavailable(ctx, o, reason, state.UnavailableCapacityTTL); err != nil {
			return c, "", err
		}
		return c, fmt.Sprintf("offering %s marked unavailable for %s", o, state.UnavailableCapacityTTL), nil
	case MarkReservationUnavailable:
		id := cmp.Or(c.Labels[apis.LabelCapacityReservationID], c.ReservationID)
		if id == "" || c.InstanceType == "" || c.Zone == "" {
			return c, "", nil
		}
		o := state.Offering{InstanceType: c.InstanceType, Zone: c.Zone, CapacityType: reservedCapacityType, ReservationID: id}
		if err := s.deps.State.MarkUnavailable(ctx, o, reason, state.UnavailableCapacityTTL); err != nil {
			return c, "", err
		}
		return c, fmt.Sprintf("capacity reservation %s (%s in %s) marked unavailable for %s", id, c.InstanceType, c.Zone, state.UnavailableCapacityTTL), nil
	case MarkLaunchFailed:
		return s.markLaunchFailed(ctx, c)
	case MarkDisrupted:
		// Its Event (SpotInterrupted, ...) is published by process once the replacement is requested
		// (announceDisrupted).
		updated, err := s.markDisrupted(ctx, c, reason, d.Deadline)
		if err != nil {
			return c, "", err
		}
		return updated, fmt.Sprintf("claim %s: %s (reason %s)", c.Name, updated.Lifecycle, reason), nil
	case TaintNode:
		note, err := s.taint(ctx, c)
		return c, note, err
	case LaunchReplacement:
		if err := s.sendReplacement(ctx, msg, c.Name, reason); err != nil {
			return c, "", err
		}
		return c, "replacement requested from the provisioner before the drain", nil
	case StartTermination:
		if err := s.sendTermination(ctx, c.Name, reason, d.Deadline); err != nil {
			return c, "", err
		}
		s.publish(ctx, c, kube.ReasonTerminatingOnInterruption, corev1.EventTypeNormal, "Terminating on interruption: "+eventMessage(msg, d))
		return c, "drain and termination requested", nil
	case RecordEvent:
		s.publish(ctx, c, EventReason(msg.Kind()), corev1.EventTypeNormal, eventMessage(msg, d))
		return c, "recorded; the policy takes no action", nil
	}
	return c, "", fmt.Errorf("unknown step %q", step)
}

// announceDisrupted publishes the Event of a claim's MarkDisrupted step (c as the step left it). It
// comes after the replacement request: the replacement is on the notice's clock, while an Event is best
// effort and a NodeClaim Event may first look up its mirror's UID.
func (s *Service) announceDisrupted(ctx context.Context, msg messages.Message, d Decision, c state.Claim) {
	s.publish(ctx, c, EventReason(msg.Kind()), corev1.EventTypeWarning, eventMessage(msg, d))
}

// markDisrupted moves the claim to draining with reason and records the notice's deadline (when it has
// one) as the claim's GoneBy. A claim already on its way out keeps its lifecycle; a draining one still
// takes an earlier deadline, and with it the notice's reason. A claim still pending has no Node to drain
// and goes to terminating.
func (s *Service) markDisrupted(ctx context.Context, c state.Claim, reason string, deadline time.Time) (state.Claim, error) {
	current := c
	updated, err := s.deps.State.UpdateClaim(ctx, c.Name, func(cl *state.Claim) error {
		current = *cl
		earlier := !deadline.IsZero() && (cl.GoneBy == nil || deadline.Before(*cl.GoneBy))
		if earlier {
			d := deadline.UTC()
			cl.GoneBy = &d
		}
		switch {
		case cl.Lifecycle == state.Draining && earlier:
			cl.DisruptionReason = reason
			return nil
		case !cl.Lifecycle.InService():
			return errUnchanged
		case cl.Lifecycle.CanMoveTo(state.Draining):
			cl.Lifecycle = state.Draining
		default:
			cl.Lifecycle = state.Terminating
		}
		cl.DisruptionReason = reason
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return current, nil
	}
	return updated, err
}

// taint puts karpenter.sh/disrupted:NoSchedule on the claim's Node; a claim without a Node, or a Node
// already gone, needs none.
func (s *Service) taint(ctx context.Context, c state.Claim) (string, error) {
	if c.NodeName == "" {
		return "no Node registered; nothing to taint", nil
	}
	err := s.deps.Nodes.Taint(ctx, c.NodeName, apis.DisruptedNoScheduleTaint)
	if kube.IsNotFound(err) {
		return "Node " + c.NodeName + " is gone; nothing to taint", nil
	}
	if err != nil {
		return "", err
	}
	return "Node " + c.NodeName + " tainted " + apis.DisruptedTaintKey + ":NoSchedule", nil
}

// publish writes a Kubernetes Event on the claim's Node (when it has one) and on its NodeClaim mirror
// (the publisher, mirror.ClaimEvents, gives it the mirror's UID). Events are best effort: a failure is
// logged and the step goes on.
func (s *Service) publish(ctx context.Context, c state.Claim, reason kube.Reason, typ, message string) {
	objects := []corev1.ObjectReference{mirror.NodeClaimObject(c.Name, "")}
	if c.NodeName != "" {
		objects = append(objects, corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: c.NodeName})
	}
	for _, o := range objects {
		if _, err := s.deps.Events.Publish(ctx, kube.Event{Object: o, Type: typ, Reason: reason, Message: message}); err != nil {
			s.deps.Log.WarnContext(ctx, "publishing a Kubernetes Event failed", "claim", c.Name, "reason", string(reason),
				"error", err.Error())
		}
	}
}

// eventMessage is the Kubernetes Event text for a message.
func eventMessage(msg messages.Message, d Decision) string {
	text := fmt.Sprintf("%s for instance %s (event %s)", DisruptionReason(msg.Kind()), d.Instance, msg.EventID())
	if !d.Deadline.IsZero() {
		text += ", instance gone at " + d.Deadline.UTC().Format("2006-01-02T15:04:05Z")
	}
	return text
}
