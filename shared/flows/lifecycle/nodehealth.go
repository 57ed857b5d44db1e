package lifecycle

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// RepairPolicy makes a Node unhealthy once its condition Condition has had status Status for Toleration
// (Karpenter's cloud provider repair policies).
type RepairPolicy struct {
	Condition  corev1.NodeConditionType
	Status     corev1.ConditionStatus
	Toleration time.Duration
}

// RepairPolicies are Karpenter's AWS repair policies: the kubelet's Ready condition, and the conditions
// the EKS node monitoring agent sets.
var RepairPolicies = []RepairPolicy{
	{corev1.NodeReady, corev1.ConditionFalse, 30 * time.Minute},
	{corev1.NodeReady, corev1.ConditionUnknown, 30 * time.Minute},
	{"AcceleratedHardwareReady", corev1.ConditionFalse, 10 * time.Minute},
	{"StorageReady", corev1.ConditionFalse, 30 * time.Minute},
	{"NetworkingReady", corev1.ConditionFalse, 30 * time.Minute},
	{"KernelReady", corev1.ConditionFalse, 30 * time.Minute},
	{"ContainerRuntimeReady", corev1.ConditionFalse, 30 * time.Minute},
}

// ImpairedToleration is how long a failed EC2 instance or system status check is tolerated: Karpenter's
// AWS provider acts on one impaired for 2 minutes (its instance status poll's UnhealthyThreshold).
const ImpairedToleration = 2 * time.Minute

// impairedStatus is the status of an UnhealthyCondition that stands for a failed EC2 status check.
const impairedStatus = "impaired"

// unhealthyOf returns what makes Node n unhealthy — a condition of RepairPolicies in its policy's
// status, or one of the failed status checks of its instance (impaired, with ImpairedToleration) — and
// whether anything does. Of several, it returns the one whose toleration ends first, as Karpenter does.
// A condition without a lastTransitionTime is unhealthy (it counts against the NodePool's share) but
// dated now, so it is never repaired on a guess of how long it has held: it waits for its own toleration.
func unhealthyOf(n *corev1.Node, impaired []state.UnhealthyCondition, now time.Time) (state.UnhealthyCondition, bool) {
	var best state.UnhealthyCondition
	found := false
	consider := func(c state.UnhealthyCondition) {
		if !found || c.Since.Add(c.Toleration).Before(best.Since.Add(best.Toleration)) {
			best, found = c, true
		}
	}
	for _, p := range RepairPolicies {
		for _, c := range n.Status.Conditions {
			if c.Type != p.Condition || c.Status != p.Status {
				continue
			}
			since := c.LastTransitionTime.Time
			if since.IsZero() {
				since = now
			}
			consider(state.UnhealthyCondition{Type: string(c.Type), Status: string(c.Status), Since: since.UTC(), Toleration: p.Toleration})
		}
	}
	for _, c := range impaired {
		consider(c)
	}
	return best, found
}

// repairDue reports whether c has held for its whole toleration at now.
func repairDue(c state.UnhealthyCondition, now time.Time) bool {
	return !now.Before(c.Since.Add(c.Toleration))
}

// allowedUnhealthy is how many of a NodePool's total nodes may be unhealthy while node repair still acts
// in it: MaxUnhealthyPercent of them, rounded up (Karpenter's rounding, as for a PodDisruptionBudget's
// percentage), so a pool of three may have one unhealthy node.
func allowedUnhealthy(total int) int {
	return (total*MaxUnhealthyPercent + 99) / 100
}

// MaxUnhealthyPercent is Karpenter's guard on node repair: when more than this share of a NodePool's
// nodes is unhealthy, the cause is likely not the nodes (a bad AMI, a network or control-plane outage),
// and replacing them would only churn, so none of the pool is repaired.
const MaxUnhealthyPercent = 20
