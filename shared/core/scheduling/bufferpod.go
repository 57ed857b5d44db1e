package scheduling

import corev1 "k8s.io/api/core/v1"

// Annotations Karpenter puts on the virtual pods it makes from a CapacityBuffer (its
// karpenter.sh/capacity-buffer-* keys); shared/adapters/capacitybuffer makes Nodewright's the same way.
const (
	// AnnotationBufferPod is "true" on a virtual pod: it stands for room a CapacityBuffer keeps and
	// exists only in a run's memory, never in the cluster.
	AnnotationBufferPod = "karpenter.sh/capacity-buffer-fake-pod"
	// AnnotationBufferName and AnnotationBufferNamespace name the CapacityBuffer a virtual pod is for.
	AnnotationBufferName      = "karpenter.sh/capacity-buffer-name"
	AnnotationBufferNamespace = "karpenter.sh/capacity-buffer-namespace"
)

// IsBufferPod reports whether p is a CapacityBuffer's virtual pod: the solver places it as any pod,
// but nothing is told about it (no Event, no record) and no PodDisruptionBudget or do-not-disrupt
// annotation counts for it.
func IsBufferPod(p *corev1.Pod) bool {
	return p != nil && p.Annotations[AnnotationBufferPod] == "true"
}
