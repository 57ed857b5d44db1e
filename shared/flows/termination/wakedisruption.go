package termination

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// DisruptionWake is the disruption-queue message the termination flow sends when it has removed a
// claim's node: a consolidation command waiting on that drain can finish, and the next command can be
// decided now rather than at the next one-minute schedule. The disruption function reads no field of
// it (any message means "run"); they say why, for the logs.
type DisruptionWake struct {
	Cluster    string    `json:"cluster"`
	Claim      string    `json:"claim"`
	Reason     string    `json:"reason"`
	ObservedAt time.Time `json:"observedAt"`
}

// wakeDisruption tells the disruption function that claim's node is gone. It is sent once per claim
// (only by the delivery that moved the claim to deleted); without a disruption queue configured nothing
// is sent and the function waits for its schedule.
func (s *Service) wakeDisruption(ctx context.Context, claim, reason string) error {
	if s.cfg.DisruptionQueueURL == "" {
		return nil
	}
	body, err := json.Marshal(DisruptionWake{Cluster: s.cfg.ClusterName, Claim: claim, Reason: reason, ObservedAt: s.deps.Now().UTC()})
	if err != nil {
		return err
	}
	_, err = s.deps.Queue.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.cfg.DisruptionQueueURL), MessageBody: aws.String(string(body))})
	if err != nil {
		return fmt.Errorf("waking the disruption function after claim %s: %w", claim, err)
	}
	return nil
}
