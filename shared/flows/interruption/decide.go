package interruption

import (
	"sort"
	"time"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// Step is one thing the interruption handler does for a claim, in the order Decide lists them.
type Step string

const (
	// MarkOfferingUnavailable takes the interrupted spot offering (type × zone) out of the next solves.
	MarkOfferingUnavailable Step = "MarkOfferingUnavailable"
	// MarkReservationUnavailable takes the capacity reservation whose owner reclaims it (an interruptible
	// reservation's interruption warning) out of the next solves, as Karpenter marks it unavailable.
	MarkReservationUnavailable Step = "MarkReservationUnavailable"
	// MarkLaunchFailed takes the offering of an instance that terminated before its Node registered out of
	// the next solves for state.DiedAtLaunchTTL: the launch failed (a volume key EC2 may not use, ...), and
	// launching the same offering again would fail again.
	MarkLaunchFailed Step = "MarkLaunchFailed"
	// MarkDisrupted records the claim as draining with the message's kind as its reason.
	MarkDisrupted Step = "MarkDisrupted"
	// TaintNode puts karpenter.sh/disrupted:NoSchedule on the Node so nothing new lands there.
	TaintNode Step = "TaintNode"
	// LaunchReplacement solves for the Node's reschedulable pods as if they were pending and launches
	// the result now — before the drain, not after it.
	LaunchReplacement Step = "LaunchReplacement"
	// StartTermination enqueues the drain and termination (with the message's deadline, if any).
	StartTermination Step = "StartTermination"
	// RecordEvent only records a Kubernetes Event and a decision record.
	RecordEvent Step = "RecordEvent"
)

// RebalancePolicy says what a rebalance recommendation does.
type RebalancePolicy string

const (
	// RebalanceEventOnly records the recommendation and changes nothing (the default, as Karpenter).
	RebalanceEventOnly RebalancePolicy = "event"
	// RebalanceReplace replaces the node and then drains it, ahead of a likely interruption.
	RebalanceReplace RebalancePolicy = "replace"
)

// ClaimPhase is how far a claim already is on its way out.
type ClaimPhase string

const (
	Running     ClaimPhase = "running"     // launched, registered or initialized
	Disrupted   ClaimPhase = "disrupted"   // draining: replacement launched, termination under way
	Terminating ClaimPhase = "terminating" // instance termination under way
)

// Claim is what the handler knows about the claim of an instance.
type Claim struct {
	Name, InstanceID, CapacityType, InstanceType, Zone string
	// ReservationID is the capacity reservation the instance runs in, if any.
	ReservationID string
	Phase         ClaimPhase
	// GoneBy is the deadline an earlier notice set on the claim (zero when none did).
	GoneBy time.Time
	// Booting says the claim is launched and its Node never registered.
	Booting bool
}

// Decision is what to do for one claim.
type Decision struct {
	Claim    string
	Instance string
	Steps    []Step
	// Deadline is when the instance will be gone, when the message says (zero otherwise).
	Deadline time.Time
	Reason   messages.Kind
}

// Decide turns a message into the steps for each of its instances that is one of ours (claims is keyed
// by instance id; other instances are not ours and are ignored). It is idempotent by construction: a
// claim already disrupted gets no new disruption steps, so duplicates and reordered deliveries never act
// twice — except that a notice with a deadline earlier than any the claim has hands that deadline to the
// drain already under way. An instance shutting down or terminated is no exception: its claim is handed
// to the termination flow like any other, and a claim already on its way out is left to that flow.
func Decide(msg messages.Message, claims map[string]Claim, rebalance RebalancePolicy) []Decision {
	var deadline time.Time
	if d, ok := msg.(messages.Deadliner); ok {
		deadline = d.Deadline()
	}
	var out []Decision
	for _, id := range msg.InstanceIDs() {
		c, ours := claims[id]
		if !ours {
			continue
		}
		d := Decision{Claim: c.Name, Instance: id, Deadline: deadline, Reason: msg.Kind()}
		switch msg.Kind() {
		case messages.SpotInterruptionKind:
			// Only a spot interruption says anything about the spot offering's capacity.
			d.Steps = disrupt(c, deadline, onlyIf(c.CapacityType == "spot", MarkOfferingUnavailable)...)
		case messages.CapacityReservationInterruptionKind:
			// The reservation's owner reclaims capacity: drained like a spot interruption, and the
			// reservation taken out of the next solves.
			d.Steps = disrupt(c, deadline, onlyIf(c.ReservationID != "", MarkReservationUnavailable)...)
		case messages.ScheduledChangeKind, messages.InstanceStoppedKind:
			d.Steps = disrupt(c, deadline)
		case messages.InstanceTerminatedKind:
			// A shutting-down instance may still run its pods: like any other notice it goes to the
			// termination flow, which drains while the kubelet lives and removes the Node and forgets
			// its pods only once EC2 says the instance is terminated.
			d.Steps = disrupt(c, deadline)
			if c.Booting && len(d.Steps) > 0 {
				// Nobody asked for it and its Node never came: the launch failed, and its offering would fail
				// the same way a few minutes later.
				d.Steps = append([]Step{MarkLaunchFailed}, d.Steps...)
			}
		case messages.RebalanceRecommendationKind:
			if rebalance == RebalanceReplace {
				d.Steps = disrupt(c, deadline)
			} else {
				d.Steps = []Step{RecordEvent}
			}
		}
		if len(d.Steps) > 0 {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Claim < out[j].Claim })
	return out
}

// disrupt is replacement first, then drain — unless the claim is already on its way out. A claim already
// draining (a rebalance replacement, a consolidation) whose instance now has an earlier deadline keeps its
// replacement and its tainted Node; only the deadline is new, and the drain must hear of it.
func disrupt(c Claim, deadline time.Time, first ...Step) []Step {
	switch {
	case c.Phase == Running:
		return append(first, MarkDisrupted, TaintNode, LaunchReplacement, StartTermination)
	case c.Phase == Disrupted && !deadline.IsZero() && (c.GoneBy.IsZero() || deadline.Before(c.GoneBy)):
		return append(first, MarkDisrupted, StartTermination)
	}
	return nil
}

// onlyIf is steps when cond holds, else none.
func onlyIf(cond bool, steps ...Step) []Step {
	if !cond {
		return nil
	}
	return steps
}
