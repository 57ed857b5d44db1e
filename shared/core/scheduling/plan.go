package scheduling

import (
	corev1 "k8s.io/api/core/v1"
)

// Plan is the solver's answer: the claims to launch, where pods go on existing capacity, and why the
// remaining pods cannot be placed.
type Plan struct {
	NewClaims     []ClaimPlan     `json:"nodeClaims"`
	ExistingNodes []NodePlacement `json:"existingNodes"`
	Unschedulable []PodFailure    `json:"unschedulable"`
	// TotalPrice is the hourly price of the new claims at their launch offerings.
	TotalPrice float64 `json:"totalPricePerHour"`
	// LowerBound is the LP lower bound on that price (see LowerBound), plus the price of the claims
	// launched into capacity reservations, which their counts rather than the LP limit; 0 when there
	// are no new claims.
	LowerBound float64 `json:"lowerBoundPerHour"`
	// NoCompatibleInstanceTypes names the NodePools whose requirements left no instance type with an
	// available offering and room for its daemons: they can launch nothing for any pod (Karpenter's
	// NoCompatibleInstanceTypes).
	NoCompatibleInstanceTypes []string `json:"noCompatibleInstanceTypes,omitempty"`
}

// ClaimPlan is one NodeClaim to launch.
type ClaimPlan struct {
	Name     string `json:"name"`
	NodePool string `json:"nodePool"`
	// Requirements for the NodeClaim, including instance-type and capacity-type In the options.
	Requirements []NodeSelectorRequirement `json:"requirements"`
	// InstanceTypeOptions are at most MaxInstanceTypeOptions names, cheapest first.
	InstanceTypeOptions []string `json:"instanceTypeOptions"`
	// InstanceType, Zone, CapacityType and Price describe the offering a launch would pick: the first
	// capacity type by precedence (reserved, spot, on-demand), and within it the cheapest offering.
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"pricePerHour"`
	// ReservationID names the capacity reservation a reserved launch takes one instance of. The
	// solve counts it against the reservation's ReservationCapacity, and Requirements exclude the
	// other reservations of the options (capacity-reservation-id NotIn), so a launch that finds it full
	// falls back to spot or on-demand rather than into capacity counted for another claim.
	ReservationID string `json:"reservationID,omitempty"`
	// Requests sums the pods' requests (daemon overhead excluded).
	Requests Resources     `json:"requests"`
	Pods     []*corev1.Pod `json:"-"`
	PodNames []string      `json:"pods"`
	// Why explains the choice of NodePool and instance types.
	Why string `json:"why"`
	// MinValuesRelaxed is set when the BestEffort policy lowered a minValues to launch.
	MinValuesRelaxed bool `json:"minValuesRelaxed,omitempty"`
	// PriceOverlayApplied and CapacityOverlayApplied say that a NodeOverlay changed the price of an
	// offering, or the extended resources, of one of InstanceTypeOptions (Karpenter's
	// karpenter.sh/price-overlay-applied and karpenter.sh/capacity-overlay-applied).
	PriceOverlayApplied    bool `json:"priceOverlayApplied,omitempty"`
	CapacityOverlayApplied bool `json:"capacityOverlayApplied,omitempty"`
}

// NodePlacement lists the pods placed on one existing node or in-flight claim.
type NodePlacement struct {
	Name     string        `json:"name"`
	Pods     []*corev1.Pod `json:"-"`
	PodNames []string      `json:"pods"`
}

// NodeFor returns the existing node or in-flight claim a pod was placed on, or "".
func (p *Plan) NodeFor(pod *corev1.Pod) string {
	for _, n := range p.ExistingNodes {
		for _, q := range n.Pods {
			if q == pod {
				return n.Name
			}
		}
	}
	return ""
}

// ClaimFor returns the index of the new claim a pod was placed on, or -1.
func (p *Plan) ClaimFor(pod *corev1.Pod) int {
	for i, c := range p.NewClaims {
		for _, q := range c.Pods {
			if q == pod {
				return i
			}
		}
	}
	return -1
}

// CostRatio is TotalPrice / LowerBound, or 1 when there is nothing to launch.
func (p *Plan) CostRatio() float64 {
	if p.LowerBound == 0 {
		return 1
	}
	return p.TotalPrice / p.LowerBound
}

func podNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = podName(p)
	}
	return out
}
