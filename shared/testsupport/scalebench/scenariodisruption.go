package scalebench

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// disruptedTaintKey is the taint a disruption command puts on its candidates.
const disruptedTaintKey = "karpenter.sh/disrupted"

// disruptionScenario: one run deciding over the whole cluster as loaded (its consolidation candidates
// are the under-filled nodes the placement leaves). What the runs carried out is undone after each
// repetition: commands rolled back, replacements retired and their instances terminated, taints lifted,
// ledger reservations released, the termination queue emptied.
type disruptionScenario struct{ world }

func (s *disruptionScenario) Arrange(context.Context, int) (Payload, error) { return Payload{}, nil }

func (s *disruptionScenario) Tidy(ctx context.Context, rep int) error {
	cmds, err := s.env.Store.ListDisruptionCommands(ctx)
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if !c.Phase.Active() {
			continue
		}
		for _, cand := range c.Candidates {
			if err := s.env.Store.ReleaseDisruption(ctx, cand.NodePool, cand.Claim); err != nil {
				return fmt.Errorf("releasing %s's reservation: %w", cand.Claim, err)
			}
			if err := s.backInService(ctx, cand.Claim); err != nil {
				return err
			}
		}
		c.Phase, c.Outcome = state.CommandRolledBack, "scale bench: undone between repetitions"
		if _, err := s.env.Store.PutDisruptionCommand(ctx, c); err != nil {
			return fmt.Errorf("rolling back command %s: %w", c.ID, err)
		}
	}
	if _, err := s.retireNewClaims(ctx, nil); err != nil {
		return err
	}
	if err := s.liftTaints(ctx, disruptedTaintKey); err != nil {
		return err
	}
	return s.purge(ctx, s.env.Queues.Termination)
}

func (s *disruptionScenario) Finish(context.Context) error { return nil }

// backInService moves a claim a run took out of service back to initialized.
func (w world) backInService(ctx context.Context, name string) error {
	_, err := w.env.Store.UpdateClaim(ctx, name, func(c *state.Claim) error {
		if c.Lifecycle == state.Draining {
			c.Lifecycle = state.Initialized
		}
		c.DisruptionReason, c.TerminationChain = "", ""
		return nil
	})
	if err != nil {
		return fmt.Errorf("putting claim %s back in service: %w", name, err)
	}
	return nil
}

// liftTaints removes the taint key (and the exclude-from-load-balancers label a drain adds) from every
// Node that has it.
func (w world) liftTaints(ctx context.Context, key string) error {
	var tainted []string
	opts := metav1.ListOptions{Limit: 500}
	for {
		nodes, err := w.env.Client.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return err
		}
		for _, n := range nodes.Items {
			for _, t := range n.Spec.Taints {
				if t.Key == key {
					tainted = append(tainted, n.Name)
					break
				}
			}
		}
		if opts.Continue = nodes.Continue; opts.Continue == "" {
			break
		}
	}
	return parallel(ctx, len(tainted), writers, func(ctx context.Context, i int) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := w.env.Client.CoreV1().Nodes().Get(ctx, tainted[i], metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Spec.Taints = withoutTaint(n.Spec.Taints, key)
			n.Spec.Unschedulable = false
			delete(n.Labels, corev1.LabelNodeExcludeBalancers)
			_, err = w.env.Client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		})
	})
}

// purge empties a queue of what the runs sent (nothing consumes it here).
func (w world) purge(ctx context.Context, url string) error {
	_, err := sqs.NewFromConfig(w.env.AWS).PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
	return err
}
