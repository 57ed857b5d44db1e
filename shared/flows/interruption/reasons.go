package interruption

import (
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// DisruptionReason is what a claim disrupted by a message of kind records as its reason, and what the
// termination request carries: "SpotInterruption", "ScheduledChange", ...
func DisruptionReason(kind messages.Kind) string {
	switch kind {
	case messages.SpotInterruptionKind:
		return "SpotInterruption"
	case messages.RebalanceRecommendationKind:
		return "RebalanceRecommendation"
	case messages.ScheduledChangeKind:
		return "ScheduledChange"
	case messages.InstanceStoppedKind:
		return "InstanceStopped"
	case messages.InstanceTerminatedKind:
		return "InstanceTerminated"
	case messages.CapacityReservationInterruptionKind:
		return "CapacityReservationInterruption"
	}
	return "Interruption"
}

// EventReason is the Kubernetes Event reason Karpenter publishes on the Node for a message of kind.
func EventReason(kind messages.Kind) kube.Reason {
	switch kind {
	case messages.SpotInterruptionKind:
		return kube.ReasonSpotInterrupted
	case messages.RebalanceRecommendationKind:
		return kube.ReasonSpotRebalanceRecommendation
	case messages.ScheduledChangeKind:
		return kube.ReasonInstanceUnhealthy
	case messages.InstanceStoppedKind:
		return kube.ReasonInstanceStopping
	case messages.InstanceTerminatedKind:
		return kube.ReasonInstanceTerminating
	case messages.CapacityReservationInterruptionKind:
		return kube.ReasonCapacityReservationInstanceInterrupted
	}
	return kube.ReasonTerminatingOnInterruption
}

// ParseRebalancePolicy reads a rebalance policy setting: "event" (also the empty string) or "replace".
func ParseRebalancePolicy(s string) (RebalancePolicy, error) {
	switch RebalancePolicy(s) {
	case "", RebalanceEventOnly:
		return RebalanceEventOnly, nil
	case RebalanceReplace:
		return RebalanceReplace, nil
	}
	return "", fmt.Errorf("rebalance policy %q: must be %q or %q", s, RebalanceEventOnly, RebalanceReplace)
}
