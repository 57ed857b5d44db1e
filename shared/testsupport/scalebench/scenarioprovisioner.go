package scalebench

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PendingShare is the share of the tier's pods the provisioner scenario leaves pending: 1%.
const PendingShare = 0.01

// provisionerScenario: one run (the backstop schedule) with 1% of the tier's pods pending, as a
// scale-up of existing Deployments leaves them. Each repetition starts with the pods pending and nothing
// in flight for them: the claims a run launched are retired and their instances terminated.
type provisionerScenario struct {
	world
	pending []*corev1.Pod
}

func (s *provisionerScenario) Arrange(ctx context.Context, rep int) (Payload, error) {
	if rep > 0 {
		return Payload{}, nil
	}
	plan := s.l.Plan
	pps := plan.PendingPods(int(float64(plan.Tier.Pods) * PendingShare))
	s.pending = make([]*corev1.Pod, len(pps))
	for i, pp := range pps {
		s.pending[i] = plan.Pod(pp, "", "")
	}
	return Payload{}, parallel(ctx, len(s.pending), writers, func(ctx context.Context, i int) error {
		return writePod(ctx, s.env.Client, s.pending[i])
	})
}

func (s *provisionerScenario) Tidy(ctx context.Context, rep int) error {
	_, err := s.retireNewClaims(ctx, nil)
	return err
}

func (s *provisionerScenario) Finish(ctx context.Context) error {
	zero := int64(0)
	return parallel(ctx, len(s.pending), writers, func(ctx context.Context, i int) error {
		p := s.pending[i]
		if err := s.env.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			return fmt.Errorf("deleting pending pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	})
}
