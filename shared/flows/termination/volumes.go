package termination

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// drained handles a Node with no pod left to drain: it records that once, then waits for the Node's
// VolumeAttachments to go, so volumes detach cleanly before the instance does. The wait ends at the
// first of: no attachment left, VolumeDetachWait after the Node was first found drained, the deadline.
func (s *Service) drained(ctx context.Context, claim state.Claim, node *corev1.Node, in delivery, deadline *time.Time,
	now time.Time) (outcome, error) {
	drainedAt := in.drainedAt
	first := stepStats{drained: drainedAt.IsZero()}
	if drainedAt.IsZero() {
		drainedAt = now
		if err := s.decide(ctx, claim.Name, "Drained", in.req, "node "+node.Name+" has no pod left to drain", nil); err != nil {
			return outcome{}, err
		}
	}
	until := drainedAt.Add(s.cfg.VolumeDetachWait)
	if deadline != nil && deadline.Before(until) {
		until = *deadline
	}
	if !now.Before(until) {
		return outcome{finished: true, stats: first}, nil
	}
	attached, err := s.attachmentsOf(ctx, node.Name)
	if err != nil {
		return outcome{}, err
	}
	if len(attached) == 0 {
		return outcome{finished: true, stats: first}, nil
	}
	s.publish(ctx, kube.Event{Object: kube.NodeObject(node), Reason: kube.ReasonAwaitingVolumeDetachment,
		Message: fmt.Sprintf("Awaiting deletion of %d VolumeAttachments bound to node", len(attached))})
	return outcome{delay: min(s.cfg.ProgressDelay, until.Sub(now)), drainedAt: drainedAt, stats: first}, nil
}

// attachmentsOf names the VolumeAttachments bound to the Node.
func (s *Service) attachmentsOf(ctx context.Context, node string) ([]string, error) {
	list, err := s.deps.Kube.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing VolumeAttachments: %w", err)
	}
	var names []string
	for _, va := range list.Items {
		if va.Spec.NodeName == node {
			names = append(names, va.Name)
		}
	}
	return names, nil
}
