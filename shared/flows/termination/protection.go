package termination

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/drain"
)

// protectionEvent tells a pod on a draining node what its duration-valued karpenter.sh/do-not-disrupt
// does to the drain: it holds the pod until its end (DoNotDisruptUntil), or it has ended and the pod is
// evicted now (DoNotDisruptGracePeriodElapsed), as Karpenter publishes when it judges a pod's eviction.
// A drain looks again every few seconds; the Recorder drops the same Event within its window, and the
// message holds nothing that changes between looks.
func protectionEvent(node *corev1.Node, tp drain.TimedProtection) kube.Event {
	v := tp.Pod.Annotations[drain.DoNotDisruptAnnotation]
	end := tp.Until.UTC().Format(time.RFC3339)
	if tp.Held {
		return kube.Event{Object: kube.PodObject(tp.Pod), Reason: kube.ReasonDoNotDisruptUntil,
			Message: fmt.Sprintf("%s: %s holds this pod on draining node %s until %s (or the node's termination deadline)",
				drain.DoNotDisruptAnnotation, v, node.Name, end)}
	}
	return kube.Event{Object: kube.PodObject(tp.Pod), Reason: kube.ReasonDoNotDisruptGracePeriodElapsed,
		Message: fmt.Sprintf("%s: %s ended at %s: this pod is evicted from draining node %s", drain.DoNotDisruptAnnotation, v,
			end, node.Name)}
}
