package mirror

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// Reasons of the NodeClaim mirror's Drained condition (Karpenter's condition type; Karpenter sets it
// Unknown with reason Draining while its termination controller drains, True once drained).
const (
	// DrainedAwaitingReplacement: a disruption request stands (a deleted mirror, `nodewright disrupt`,
	// node repair) and the disruption run has not handed the node to the drain yet: its replacement
	// launches and initializes first.
	DrainedAwaitingReplacement = "AwaitingReplacement"
	DrainedDraining            = "Draining"
	DrainedDrained             = "Drained"
)

// drained is the mirror's Drained condition, when the claim is on its way out or asked to be: what holds
// its removal, from the record alone (no read of its own).
//   - A request stands and the claim is in service: Unknown, AwaitingReplacement, naming who asked, when,
//     and what comes next.
//   - The claim drains: Unknown, Draining, with what may hold the drain and until when.
//   - The claim terminates: True.
func drained(c state.Claim, l state.Lifecycle, at func(*time.Time) metav1.Time) (metav1.Condition, bool) {
	switch {
	case l == state.Terminating:
		return metav1.Condition{Type: apis.ConditionTypeDrained, Status: metav1.ConditionTrue, Reason: DrainedDrained,
			LastTransitionTime: at(c.TerminatingAt)}, true
	case l == state.Draining:
		return metav1.Condition{Type: apis.ConditionTypeDrained, Status: metav1.ConditionUnknown, Reason: DrainedDraining,
			Message: "pods are being evicted; " + drainHold(c), LastTransitionTime: at(c.DrainingAt)}, true
	case l.InService() && c.DisruptionRequest != nil:
		r := c.DisruptionRequest
		msg := "disruption requested"
		if r.By != "" {
			msg += " by " + r.By
		}
		msg += " at " + r.RequestedAt.UTC().Format(time.RFC3339)
		if r.Reason != "" {
			msg += " (" + r.Reason + ")"
		}
		if c.NodeName == "" {
			msg += "; the claim has no Node yet, so the disruption run hands it to the termination flow at once"
		} else {
			msg += "; the disruption run launches replacement capacity for its pods first, then the node is drained " +
				"(NodePool budgets do not hold it back); " + drainHold(c)
		}
		requested := r.RequestedAt
		return metav1.Condition{Type: apis.ConditionTypeDrained, Status: metav1.ConditionUnknown, Reason: DrainedAwaitingReplacement,
			Message: msg, LastTransitionTime: at(&requested)}, true
	}
	return metav1.Condition{}, false
}

// drainHold says what may hold the claim's drain and for how long: pods with karpenter.sh/do-not-disrupt
// and PodDisruptionBudgets that allow no eviction, until its terminationGracePeriod ends (forever without one).
func drainHold(c state.Claim) string {
	const held = "pods with karpenter.sh/do-not-disrupt and PodDisruptionBudgets that allow no eviction hold the drain"
	switch {
	case c.GoneBy != nil:
		return fmt.Sprintf("%s until the instance goes at %s", held, c.GoneBy.UTC().Format(time.RFC3339))
	case c.TerminationGracePeriod == nil:
		return held + " for as long as they stay (the claim has no terminationGracePeriod)"
	case c.DrainingAt != nil:
		return fmt.Sprintf("%s until its terminationGracePeriod (%s) ends at %s", held, c.TerminationGracePeriod,
			c.DrainingAt.Add(*c.TerminationGracePeriod).UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s for at most its terminationGracePeriod (%s)", held, c.TerminationGracePeriod)
}
