package disruptionrun

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// maxProtectionEvents bounds the DoNotDisruptUntil and DoNotDisruptGracePeriodElapsed Events one run
// publishes; the pods past it are told by the next runs. A deployment that rolls out thousands of pods
// with a duration annotation at once must not spend the Recorder's burst, which the run's own
// DisruptionLaunching and DisruptionTerminating Events share.
const maxProtectionEvents = 20

// doNotDisruptEvents tells the pods of Nodewright nodes what their karpenter.sh/do-not-disrupt
// annotation does, as Karpenter does when it judges a pod's disruptability:
//   - a value that is neither "true" nor a duration protects nothing: InvalidDoNotDisruptAnnotation (the
//     Recorder drops repeats, so a value left in place is not reported again every run);
//   - a duration not over yet: DoNotDisruptUntil, with the moment it ends;
//   - a duration that ended within KeptEvery: DoNotDisruptGracePeriodElapsed, the pod may be disrupted
//     now (an older end was news long ago, and a cold start does not announce it again).
//
// The last two are published once per pod and end (r.protections remembers them), at most
// maxProtectionEvents a run; the memo keeps only the pods of this read.
func (r *Runner) doNotDisruptEvents(ctx context.Context, w *world, rep *Report) {
	now := w.input.Now
	var events []kube.Event
	r.mu.Lock()
	seen := map[types.UID]string{}
	fresh := 0
	for i := range w.input.Nodes {
		n := &w.input.Nodes[i]
		if n.NodePool == "" {
			continue
		}
		for _, p := range n.Pods {
			protected, until, err := disruption.DoNotDisrupt(p, now)
			if err != nil {
				events = append(events, kube.Event{Object: kube.PodObject(p), Type: corev1.EventTypeWarning,
					Reason: kube.ReasonInvalidDoNotDisruptAnnotation, Message: err.Error()})
				continue
			}
			e, ok := protectionEvent(p, protected, until, now, r.cfg.KeptEvery)
			if !ok {
				continue
			}
			key := string(e.Reason) + "\x00" + e.Message
			if r.protections[p.UID] == key {
				seen[p.UID] = key
				continue
			}
			if fresh < maxProtectionEvents {
				fresh++
				seen[p.UID] = key
				events = append(events, e)
			}
		}
	}
	r.protections = seen
	r.mu.Unlock()
	for _, e := range events {
		r.publish(ctx, e, rep)
	}
}

// protectionEvent is the Event that tells pod what its duration-valued do-not-disrupt annotation does at
// now; ok is false for a pod without one, protected by "true", or whose protection ended more than
// recent ago.
func protectionEvent(pod *corev1.Pod, protected bool, until, now time.Time, recent time.Duration) (kube.Event, bool) {
	if until.IsZero() {
		return kube.Event{}, false
	}
	v := pod.Annotations[disruption.AnnotationDoNotDisrupt]
	if protected {
		return kube.Event{Object: kube.PodObject(pod), Reason: kube.ReasonDoNotDisruptUntil,
			Message: fmt.Sprintf("%s: %s protects this pod from voluntary disruption until %s", disruption.AnnotationDoNotDisrupt, v,
				until.UTC().Format(time.RFC3339))}, true
	}
	if now.Sub(until) >= recent {
		return kube.Event{}, false
	}
	return kube.Event{Object: kube.PodObject(pod), Reason: kube.ReasonDoNotDisruptGracePeriodElapsed,
		Message: fmt.Sprintf("%s: %s ended at %s: this pod may be disrupted now", disruption.AnnotationDoNotDisrupt, v,
			until.UTC().Format(time.RFC3339))}, true
}
