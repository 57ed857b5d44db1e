package provisioning

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// placedInFlight lists, per claim in flight, the pods the plan placed on it that isNew says went pending
// since the previous run (Report.PlacedInFlight). CapacityBuffer virtual pods are left out.
func placedInFlight(plan *scheduling.Plan, inFlight []scheduling.InFlightClaim, isNew func(*corev1.Pod) bool) []InFlightPlacement {
	var out []InFlightPlacement
	forEachNewInFlight(plan, inFlight, isNew, func(claim string, pod *corev1.Pod) {
		if n := len(out); n == 0 || out[n-1].Claim != claim {
			out = append(out, InFlightPlacement{Claim: claim})
		}
		out[len(out)-1].PodUIDs = append(out[len(out)-1].PodUIDs, pod.UID)
	})
	return out
}

// forEachNewInFlight calls f, claim by claim in the plan's order, for each pod the plan placed on a claim
// in flight that isNew says went pending since the previous run; never for a CapacityBuffer virtual pod
// or a pod placed on a Node.
func forEachNewInFlight(plan *scheduling.Plan, inFlight []scheduling.InFlightClaim, isNew func(*corev1.Pod) bool, f func(claim string, pod *corev1.Pod)) {
	if plan == nil || isNew == nil || len(inFlight) == 0 {
		return
	}
	claims := make(map[string]bool, len(inFlight))
	for _, c := range inFlight {
		claims[c.Name] = true
	}
	for _, n := range plan.ExistingNodes {
		if !claims[n.Name] {
			continue
		}
		for _, pod := range n.Pods {
			if !scheduling.IsBufferPod(pod) && isNew(pod) {
				f(n.Name, pod)
			}
		}
	}
}
