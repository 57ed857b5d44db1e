package drain

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// Pod annotations, taints and priority classes the plan reads.
const (
	DoNotDisruptAnnotation = disruption.AnnotationDoNotDisrupt
	DisruptedTaintKey      = "karpenter.sh/disrupted"
	mirrorAnnotation       = corev1.MirrorPodAnnotationKey
)

// DefaultGracePeriod is Kubernetes' default terminationGracePeriodSeconds.
const DefaultGracePeriod = 30 * time.Second

// Action is what to do with a pod now.
type Action string

const (
	Evict  Action = "Evict"  // through the Eviction API (PDBs apply)
	Delete Action = "Delete" // the deadline forces it: delete with GracePeriod, bypassing PDBs
	Wait   Action = "Wait"   // nothing now (a later tier, do-not-disrupt, already terminating)
)

// Decision is one pod's part of the plan.
type Decision struct {
	Pod    *corev1.Pod
	Action Action
	Reason string
	// GracePeriod is the deletion grace for Delete.
	GracePeriod time.Duration
	// Tier is the pod's eviction tier, 1 to 4.
	Tier int
}

// Input is a node's pods at one moment.
type Input struct {
	Pods []*corev1.Pod
	Now  time.Time
	// Deadline is when every pod must be gone (nil: no terminationGracePeriod).
	Deadline *time.Time
}

// Plan is what to do now.
type Plan struct {
	Decisions []Decision
	// Drained is true when no pod needs draining any more: the instance may be terminated.
	Drained bool
	// NextDeadlineDelete is the earliest future moment a pod becomes due for deletion (zero if none), so
	// the caller can come back in time.
	NextDeadlineDelete time.Time
	// Invalid are the pods whose karpenter.sh/do-not-disrupt value is neither "true" nor a duration: it
	// protects nothing, and the caller says so with an InvalidDoNotDisruptAnnotation Event.
	Invalid []InvalidAnnotation
	// Timed are the pods whose karpenter.sh/do-not-disrupt value is a duration: the caller tells each when
	// it ends (DoNotDisruptUntil) or that it has (DoNotDisruptGracePeriodElapsed), as Karpenter does when
	// it judges a pod's eviction.
	Timed []TimedProtection
}

// TimedProtection is a pod protected by a duration-valued karpenter.sh/do-not-disrupt: Held while it
// lasts, Until when it ends.
type TimedProtection struct {
	Pod   *corev1.Pod
	Held  bool
	Until time.Time
}

// InvalidAnnotation is a pod whose karpenter.sh/do-not-disrupt value was ignored, and why.
type InvalidAnnotation struct {
	Pod    *corev1.Pod
	Reason string
}

// Of returns the plan for in.
func Of(in Input) Plan {
	var p Plan
	var pending []*corev1.Pod
	for _, pod := range in.Pods {
		if needsDraining(pod, in.Now) {
			pending = append(pending, pod)
		}
	}
	p.Drained = len(pending) == 0
	held := map[*corev1.Pod]bool{}
	for _, pod := range pending {
		protected, until, err := disruption.DoNotDisrupt(pod, in.Now)
		held[pod] = protected
		if err != nil {
			p.Invalid = append(p.Invalid, InvalidAnnotation{Pod: pod, Reason: err.Error()})
		}
		if !until.IsZero() && pod.DeletionTimestamp == nil {
			p.Timed = append(p.Timed, TimedProtection{Pod: pod, Held: protected, Until: until})
		}
	}
	lowest := 5
	for _, pod := range pending {
		if pod.DeletionTimestamp == nil && !held[pod] {
			lowest = min(lowest, tier(pod))
		}
	}
	for _, pod := range pending {
		d := Decision{Pod: pod, Tier: tier(pod)}
		if del, grace, due, ok := deadlineDelete(pod, in); ok {
			if del {
				d.Action, d.GracePeriod, d.Reason = Delete, grace, "the termination deadline leaves no time for a graceful eviction"
				p.Decisions = append(p.Decisions, d)
				continue
			}
			if p.NextDeadlineDelete.IsZero() || due.Before(p.NextDeadlineDelete) {
				p.NextDeadlineDelete = due
			}
		}
		switch {
		case pod.DeletionTimestamp != nil:
			d.Action, d.Reason = Wait, "terminating"
		case held[pod]:
			d.Action, d.Reason = Wait, DoNotDisruptAnnotation+" holds it until the termination deadline"
		case d.Tier > lowest:
			d.Action, d.Reason = Wait, "waits for the pods of an earlier eviction tier"
		default:
			d.Action, d.Reason = Evict, "drain"
		}
		p.Decisions = append(p.Decisions, d)
	}
	return p
}

// deadlineDelete says whether the pod must be deleted now because of the deadline and, if not, when it
// will be (ok is false without a deadline).
func deadlineDelete(pod *corev1.Pod, in Input) (now bool, grace time.Duration, due time.Time, ok bool) {
	if in.Deadline == nil {
		return false, 0, time.Time{}, false
	}
	tgps := DefaultGracePeriod
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		tgps = time.Duration(*s) * time.Second
	}
	due = in.Deadline.Add(-tgps)
	if in.Now.Before(due) {
		return false, 0, due, true
	}
	grace = max(min(in.Deadline.Sub(in.Now), tgps), time.Second)
	return true, grace.Truncate(time.Second), due, true
}

// needsDraining reports whether the pod still has to leave the node.
func needsDraining(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := pod.Annotations[mirrorAnnotation]; mirror {
		return false
	}
	if toleratesDisrupted(pod) {
		return false
	}
	if pod.DeletionTimestamp != nil {
		grace := DefaultGracePeriod
		if pod.DeletionGracePeriodSeconds != nil {
			grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		}
		if now.After(pod.DeletionTimestamp.Add(grace)) {
			return false // stuck terminating past its grace: it will not leave by our waiting
		}
	}
	return true
}

func toleratesDisrupted(pod *corev1.Pod) bool {
	taint := corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}
	for _, t := range pod.Spec.Tolerations {
		if t.ToleratesTaint(&taint) {
			return true
		}
	}
	return false
}

// tier is the pod's eviction tier: 1 non-critical, 2 non-critical DaemonSet, 3 critical, 4 critical
// DaemonSet.
func tier(pod *corev1.Pod) int {
	critical := pod.Spec.PriorityClassName == "system-cluster-critical" || pod.Spec.PriorityClassName == "system-node-critical"
	daemon := false
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" {
			daemon = true
		}
	}
	t := 1
	if daemon {
		t++
	}
	if critical {
		t += 2
	}
	return t
}
