package provisioning

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// EventPublisher writes Kubernetes Events; *kube.Recorder satisfies it (deduplicated and rate-limited).
type EventPublisher interface {
	Publish(ctx context.Context, e kube.Event) (bool, error)
}

var _ EventPublisher = (*kube.Recorder)(nil)

// nominations are the Nominated Events of launched claims, as Karpenter publishes them: each pod of a
// claim is told where it is going. A CapacityBuffer's virtual pods exist in no cluster and are told nothing.
func nominations(launched []launchedPlan) []kube.Event {
	var out []kube.Event
	for _, l := range launched {
		for _, pod := range l.plan.Pods {
			if scheduling.IsBufferPod(pod) {
				continue
			}
			out = append(out, kube.Event{Object: kube.PodObject(pod), Reason: kube.ReasonNominated,
				Message: fmt.Sprintf("Pod should schedule on: nodeclaim/%s", l.claim.Name)})
		}
	}
	return out
}

// inFlightNominations are the Nominated Events of the pods the plan placed on claims in flight that isNew
// says went pending since the previous run (see Report.PlacedInFlight).
func inFlightNominations(plan *scheduling.Plan, inFlight []scheduling.InFlightClaim, isNew func(*corev1.Pod) bool) []kube.Event {
	var out []kube.Event
	forEachNewInFlight(plan, inFlight, isNew, func(claim string, pod *corev1.Pod) {
		out = append(out, kube.Event{Object: kube.PodObject(pod), Reason: kube.ReasonNominated,
			Message: fmt.Sprintf("Pod should schedule on: nodeclaim/%s", claim)})
	})
	return out
}

// explanation tells a pod no NodePool can take it why, with the solver's precise reason; ok is false for
// a failure that names no pod.
func explanation(f scheduling.PodFailure) (kube.Event, bool) {
	if f.Pod == nil {
		return kube.Event{}, false
	}
	return kube.Event{Object: kube.PodObject(f.Pod), Type: corev1.EventTypeWarning,
		Reason: kube.ReasonFailedScheduling, Message: "Failed to schedule pod, " + f.Reason}, true
}

// maxEventWrites bounds the Events a run writes at once. One after another, the fifty a Recorder lets
// through in a burst held the run (and the lease every later pod waits for) for fifty API server round
// trips.
const maxEventWrites = 8

// publishAll publishes evs, maxEventWrites at a time, until ctx ends; the publisher drops duplicates and
// what its rate limit does not allow, so the writes made are bounded however many Events are asked for.
// A write cut off by ctx is not a failure (a later run tells the pod); other failures are in rep.Errors.
// A publisher's panic is raised again on the run's goroutine, where the lease's holder recovers it.
func (p *Provisioner) publishAll(ctx context.Context, evs []kube.Event, rep *Report) {
	if p.deps.Events == nil || len(evs) == 0 {
		return
	}
	var mu sync.Mutex // guards rep
	g, gctx := crash.WithContext(ctx)
	g.SetLimit(maxEventWrites)
	for _, e := range evs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil // the budget ended while this write waited for a slot
			}
			if _, err := p.deps.Events.Publish(gctx, e); err != nil && gctx.Err() == nil {
				mu.Lock()
				rep.Errors = append(rep.Errors, err.Error())
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
}
