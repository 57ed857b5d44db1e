package scalebench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// InterruptionNotices is how many spot interruption warnings the interruption scenario's batch holds.
const InterruptionNotices = 10

// interruptionScenario: a batch of InterruptionNotices EC2 spot interruption warnings (as EventBridge
// delivers them to the interruption queue) for spot nodes of the tier, the next ones each repetition.
// After each repetition the claims are put back in service, the taints lifted and the queues the
// batch sent to emptied.
type interruptionScenario struct {
	world
	claims []string
}

func (s *interruptionScenario) Arrange(ctx context.Context, rep int) (Payload, error) {
	plan := s.l.Plan
	var spot []int
	for i, n := range plan.Nodes {
		if n.CapacityType == "spot" && i > GatedDrains {
			spot = append(spot, i)
		}
	}
	if len(spot) < InterruptionNotices {
		return Payload{}, fmt.Errorf("the tier has %d spot nodes, fewer than %d", len(spot), InterruptionNotices)
	}
	var msgs []string
	s.claims = nil
	for k := 0; k < InterruptionNotices; k++ {
		i := spot[(rep*InterruptionNotices+k)%len(spot)]
		n, inst := plan.Nodes[i], s.l.Instances[i]
		body, err := json.Marshal(map[string]any{
			"version": "0", "id": fmt.Sprintf("bench-spot-%d-%s", rep, inst.ID), "detail-type": "EC2 Spot Instance Interruption Warning",
			"source": "aws.ec2", "account": "123456789012", "time": time.Now().UTC().Format(time.RFC3339), "region": "us-east-1",
			"resources": []string{"arn:aws:ec2:us-east-1:123456789012:instance/" + inst.ID},
			"detail":    map[string]string{"instance-id": inst.ID, "instance-action": "terminate"},
		})
		if err != nil {
			return Payload{}, err
		}
		msgs = append(msgs, string(body))
		s.claims = append(s.claims, n.Claim)
	}
	return Payload{Messages: msgs}, nil
}

func (s *interruptionScenario) Tidy(ctx context.Context, rep int) error {
	for _, c := range s.claims {
		if _, err := s.env.Store.UpdateClaim(ctx, c, func(c *state.Claim) error {
			c.GoneBy = nil
			return nil
		}); err != nil {
			return err
		}
		if err := s.backInService(ctx, c); err != nil {
			return err
		}
	}
	if _, err := s.retireNewClaims(ctx, nil); err != nil {
		return err
	}
	if err := s.liftTaints(ctx, disruptedTaintKey); err != nil {
		return err
	}
	if err := s.purge(ctx, s.env.Queues.Termination); err != nil {
		return err
	}
	return s.purge(ctx, s.env.Queues.Provisioning)
}

func (s *interruptionScenario) Finish(context.Context) error { return nil }
