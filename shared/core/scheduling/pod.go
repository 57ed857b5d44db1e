package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// mirrorPodAnnotation marks static pods mirrored by the kubelet.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// PodRequests returns what the pod needs from a node, following kube-scheduler's accounting: the sum of
// app containers plus restartable init containers (sidecars), or the largest init-time peak if that is
// higher, plus the pod overhead, plus one pod. A container request that is unset but has a limit uses the
// limit, as the API server defaults it.
//
// Sums are capped at 2^62 per resource (each container's values are at most MaxQuantity), so an
// unchecked pod from the cluster never wraps around; ValidatePodResources rejects such pods.
func PodRequests(pod *corev1.Pod) Resources {
	var apps Resources
	for i := range pod.Spec.Containers {
		apps = apps.Add(containerRequests(&pod.Spec.Containers[i])).clampedTo(maxUsed)
	}
	var sidecars, initPeak Resources
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		req := containerRequests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars = sidecars.Add(req).clampedTo(maxUsed)
			initPeak = initPeak.Max(sidecars)
			continue
		}
		initPeak = initPeak.Max(req.Add(sidecars).clampedTo(maxUsed))
	}
	total := apps.Add(sidecars).clampedTo(maxUsed).Max(initPeak)
	if pod.Spec.Overhead != nil {
		total = total.Add(ResourcesFromList(pod.Spec.Overhead)).clampedTo(maxUsed)
	}
	total.Pods = 1
	return total
}

func containerRequests(c *corev1.Container) Resources {
	r := ResourcesFromList(c.Resources.Requests)
	for name, q := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; !ok {
			r.set(name, q)
		}
	}
	return r
}

// IsProvisionable reports whether Karpenter would provision capacity for the pod: kube-scheduler marked
// it Unschedulable, it is not bound or nominated to a node, it is neither a DaemonSet pod nor a static
// (mirror) pod, and it does not opt out of Karpenter's nodes (OptsOut).
func IsProvisionable(pod *corev1.Pod) bool {
	return !isBound(pod) && pod.Status.NominatedNodeName == "" && failedToSchedule(pod) &&
		!isOwnedBy(pod, "DaemonSet") && !isOwnedBy(pod, "Node") && pod.Annotations[mirrorPodAnnotation] == "" && !OptsOut(pod)
}

func isBound(pod *corev1.Pod) bool { return pod.Spec.NodeName != "" }

func failedToSchedule(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

func isOwnedBy(pod *corev1.Pod, kind string) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

// isTerminal reports whether the pod has finished or is being deleted; such pods free their resources.
func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil
}

// ValidatePod returns why Karpenter refuses to provision for the pod, or nil: requests that are negative
// or too large (ValidatePodResources), node selector terms with matchFields, unsupported operators, and
// restricted label keys (kubernetes.io/hostname and karpenter.sh keys that are not well-known) in its
// nodeSelector or node affinity.
func ValidatePod(pod *corev1.Pod) error {
	if err := ValidatePodResources(pod); err != nil {
		return err
	}
	for key := range pod.Spec.NodeSelector {
		if IsRestrictedLabel(NormalizeLabel(key)) {
			return fmt.Errorf("nodeSelector uses restricted label %q", key)
		}
	}
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil {
		return nil
	}
	var terms []corev1.NodeSelectorTerm
	if req := aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		terms = append(terms, req.NodeSelectorTerms...)
	}
	for _, p := range aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		terms = append(terms, p.Preference)
	}
	for _, t := range terms {
		if len(t.MatchFields) > 0 {
			return fmt.Errorf("node affinity term uses matchFields, which cannot be provisioned for")
		}
		for _, e := range t.MatchExpressions {
			if IsRestrictedLabel(NormalizeLabel(e.Key)) {
				return fmt.Errorf("node affinity uses restricted label %q", e.Key)
			}
			if _, err := NewRequirement(e.Key, Operator(e.Operator), e.Values...); err != nil {
				return fmt.Errorf("node affinity: %w", err)
			}
		}
	}
	return nil
}
