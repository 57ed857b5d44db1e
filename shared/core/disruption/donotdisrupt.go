package disruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DoNotDisrupt reads a pod's karpenter.sh/do-not-disrupt annotation at now: "true" protects it for as long
// as it runs, a duration ("30m", "1h30m") for that long after it started, as in Karpenter. It returns whether the
// annotation protects the pod now and, for the duration form, until when (zero for "true"). The duration
// counts from the pod's status.startTime, as Karpenter counts it; a pod not started yet is protected. A
// value that is neither "true", "false" nor a positive duration protects nothing and comes back as an
// error naming the value, for an InvalidDoNotDisruptAnnotation Event.
func DoNotDisrupt(pod *corev1.Pod, now time.Time) (protected bool, until time.Time, err error) {
	v, ok := pod.Annotations[AnnotationDoNotDisrupt]
	switch {
	case !ok || v == "false":
		return false, time.Time{}, nil
	case v == "true":
		return true, time.Time{}, nil
	}
	d, perr := time.ParseDuration(v)
	if perr != nil || d <= 0 {
		return false, time.Time{}, fmt.Errorf("annotation %s: value %q is neither \"true\" nor a positive duration such as \"30m\"; it is ignored",
			AnnotationDoNotDisrupt, v)
	}
	if pod.Status.StartTime == nil {
		return true, time.Time{}, nil
	}
	until = pod.Status.StartTime.Add(d)
	return now.Before(until), until, nil
}
