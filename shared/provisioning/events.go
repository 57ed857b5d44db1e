package provisioning

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/scheduling"
)

// EventPublisher writes Kubernetes Events; *kube.Recorder satisfies it (deduplicated and rate-limited).
type EventPublisher interface {
	Publish(ctx context.Context, e kube.Event) (bool, error)
}

var _ EventPublisher = (*kube.Recorder)(nil)

// nominate tells each pod of a launched claim where it is going, as Karpenter's Nominated event does.
func (p *Provisioner) nominate(ctx context.Context, claim string, pods []*corev1.Pod, rep *Report) {
	for _, pod := range pods {
		p.publish(ctx, kube.Event{Object: kube.PodObject(pod), Reason: kube.ReasonNominated,
			Message: fmt.Sprintf("Pod should schedule on: nodeclaim/%s", claim)}, rep)
	}
}

// explain tells a pod no NodePool can take it why, with the solver's precise reason.
func (p *Provisioner) explain(ctx context.Context, f scheduling.PodFailure, rep *Report) {
	if f.Pod == nil {
		return
	}
	p.publish(ctx, kube.Event{Object: kube.PodObject(f.Pod), Type: corev1.EventTypeWarning,
		Reason: kube.ReasonFailedScheduling, Message: "Failed to schedule pod, " + f.Reason}, rep)
}

func (p *Provisioner) publish(ctx context.Context, e kube.Event, rep *Report) {
	if p.deps.Events == nil {
		return
	}
	if _, err := p.deps.Events.Publish(ctx, e); err != nil && ctx.Err() == nil {
		// An Event cut off by the budget its caller gave it is not a failure: a later run tells the pod.
		rep.Errors = append(rep.Errors, err.Error())
	}
}
