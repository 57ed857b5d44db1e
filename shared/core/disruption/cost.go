package disruption

import (
	"cmp"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// EvictionCost is how much evicting the pod costs, Karpenter's formula: 1 plus its
// pod-deletion-cost annotation / 2^27 plus its priority / 2^25, clamped to [-10, 10]. An unreadable
// annotation counts as 0.
func EvictionCost(pod *corev1.Pod) float64 {
	cost := 1.0
	if v, ok := pod.Annotations[AnnotationPodDeletionCost]; ok {
		if d, err := strconv.ParseInt(v, 10, 32); err == nil {
			cost += float64(d) / (1 << 27)
		}
	}
	if pod.Spec.Priority != nil {
		cost += float64(*pod.Spec.Priority) / (1 << 25)
	}
	return min(max(cost, -10), 10)
}

// baseDisruptionCost is what disrupting a node costs with no pod to move (Karpenter's
// PerNodeBaseDisruptionCost); a node whose RescheduleDisruptionCost is no more is empty.
const baseDisruptionCost = 1.0

// RescheduleDisruptionCost is the cost of moving pods elsewhere: 1 plus the sum of their positive
// eviction costs.
func RescheduleDisruptionCost(pods []*corev1.Pod) float64 {
	cost := baseDisruptionCost
	for _, p := range pods {
		cost += podDisruptionCost(p)
	}
	return cost
}

// podDisruptionCost is what moving pod adds to its node's disruption cost: its eviction cost, counted
// only when positive.
func podDisruptionCost(pod *corev1.Pod) float64 { return max(0, EvictionCost(pod)) }

// isReschedulable reports whether the pod must move when its node goes: it is running or pending
// (not finished, not being deleted), and neither a DaemonSet pod nor a static (mirror) pod.
func isReschedulable(pod *corev1.Pod) bool {
	return isActive(pod) && !ownedBy(pod, "DaemonSet") && !isMirror(pod)
}

// isActive reports whether the pod has neither finished nor is being deleted.
func isActive(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed && pod.DeletionTimestamp == nil
}

func isMirror(pod *corev1.Pod) bool {
	_, mirror := pod.Annotations[AnnotationMirrorPod]
	return mirror || ownedBy(pod, "Node")
}

func ownedBy(pod *corev1.Pod, kind string) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// comparePodKeys is cmp.Compare(podKey(a), podKey(b)) without building the keys (sorting a large
// node's pods built two strings per comparison).
func comparePodKeys(a, b *corev1.Pod) int {
	ka, kb := [3]string{a.Namespace, "/", a.Name}, [3]string{b.Namespace, "/", b.Name}
	i, j, x, y := 0, 0, 0, 0 // part and byte in a's key, part and byte in b's
	for {
		for i < 3 && x == len(ka[i]) {
			i, x = i+1, 0
		}
		for j < 3 && y == len(kb[j]) {
			j, y = j+1, 0
		}
		switch {
		case i == 3 && j == 3:
			return 0
		case i == 3:
			return -1
		case j == 3:
			return 1
		}
		if c := cmp.Compare(ka[i][x], kb[j][y]); c != 0 {
			return c
		}
		x, y = x+1, y+1
	}
}

// Reschedulable reports whether the pod must move when its node goes: active, and neither a DaemonSet
// pod nor a static (mirror) pod. A node with none is empty of workloads.
func Reschedulable(pod *corev1.Pod) bool { return isReschedulable(pod) }
