package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Taints that come and go while a node starts and that the scheduler therefore ignores on nodes that
// are not yet initialized.
const (
	TaintNotReady          = "node.kubernetes.io/not-ready"
	TaintUnreachable       = "node.kubernetes.io/unreachable"
	TaintCloudUninitalized = "node.cloudprovider.kubernetes.io/uninitialized"
	TaintUnregistered      = "karpenter.sh/unregistered"
	TaintDisrupted         = "karpenter.sh/disrupted"
	readinessTaintPrefix   = "readiness.k8s.io/"
)

// IsEphemeralTaint reports whether t is one of the taints a booting node carries briefly.
func IsEphemeralTaint(t corev1.Taint) bool {
	switch t.Key {
	case TaintNotReady, TaintUnreachable, TaintCloudUninitalized, TaintUnregistered:
		return true
	}
	return strings.HasPrefix(t.Key, readinessTaintPrefix)
}

// UntoleratedError names the taint a pod does not tolerate.
type UntoleratedError struct{ Taint corev1.Taint }

func (e *UntoleratedError) Error() string {
	return fmt.Sprintf("did not tolerate taint %s", taintString(e.Taint))
}

// Tolerates returns nil when tolerations tolerate every NoSchedule and NoExecute taint in taints (and every
// PreferNoSchedule taint when strict is true), or an *UntoleratedError for the first one that is not.
func Tolerates(tolerations []corev1.Toleration, taints []corev1.Taint, strict bool) error {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !strict {
			continue
		}
		tolerated := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(t) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return &UntoleratedError{Taint: *t}
		}
	}
	return nil
}

// SchedulingTaints returns the taints that count for placing pods on a node. For a node that is not
// initialized, startup taints and ephemeral taints are dropped: they will be removed before the pod binds.
func SchedulingTaints(taints, startupTaints []corev1.Taint, initialized bool) []corev1.Taint {
	if initialized {
		return taints
	}
	var out []corev1.Taint
	for _, t := range taints {
		if IsEphemeralTaint(t) || containsTaint(startupTaints, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

func containsTaint(taints []corev1.Taint, t corev1.Taint) bool {
	for i := range taints {
		if taints[i].MatchTaint(&t) {
			return true
		}
	}
	return false
}

func hasPreferNoSchedule(taints []corev1.Taint) bool {
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			return true
		}
	}
	return false
}

func taintString(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}
