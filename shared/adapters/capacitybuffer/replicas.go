package capacitybuffer

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// chunks is how many copies of the pod template the buffer keeps room for, with Karpenter's (and
// Cluster Autoscaler's) rules: the larger of replicas and the percentage of the scalable workload's
// replicas (rounded up, at least 1 when both are positive); limits cap that (each resource the
// template requests: floor(limit / request), the smallest), and alone decide it when neither
// replicas nor percentage is set. A buffer with none of the three keeps no room. scalable is the
// workload's replicas, -1 for a podTemplateRef.
func chunks(spec Spec, scalable int32, template *corev1.PodTemplateSpec) int32 {
	var want []int32
	if spec.Replicas != nil {
		want = append(want, max(*spec.Replicas, 0))
	}
	if spec.Percentage != nil && scalable > 0 {
		want = append(want, percentOf(scalable, *spec.Percentage))
	}
	desired := int32(0)
	for _, n := range want {
		desired = max(desired, n)
	}
	if len(spec.Limits) > 0 && template != nil {
		if byLimits, ok := limitChunks(spec.Limits, template); ok {
			if len(want) == 0 {
				return byLimits
			}
			return min(desired, byLimits)
		}
	}
	return desired
}

// percentOf is ceil(replicas × percentage / 100), at least 1 when both are positive.
func percentOf(replicas, percentage int32) int32 {
	if percentage <= 0 || replicas <= 0 {
		return 0
	}
	n := (int64(replicas)*int64(percentage) + 99) / 100
	return int32(min(max(n, 1), math.MaxInt32))
}

// limitChunks is how many templates' requests fit in limits: for each resource both name (and the
// template requests more than zero of), floor(limit / request); the smallest. ok is false when no
// resource is in both, and then limits limit nothing.
func limitChunks(limits corev1.ResourceList, template *corev1.PodTemplateSpec) (int32, bool) {
	requests := scheduling.PodRequests(&corev1.Pod{Spec: template.Spec}).List()
	best, ok := int64(math.MaxInt32), false
	for name, limit := range limits {
		req, found := requests[name]
		if !found || req.IsZero() {
			continue
		}
		ok = true
		best = min(best, max(limit.MilliValue(), 0)/req.MilliValue())
	}
	return int32(best), ok
}
