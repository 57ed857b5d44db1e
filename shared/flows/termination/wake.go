package termination

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nodewright/nodewright/shared/adapters/provisioningqueue"
)

// wakeUp is the provisioning-queue message the termination flow sends when it starts draining a Node:
// the provisioner treats the Node's pods as pending (it is tainted karpenter.sh/disrupted) and launches
// their replacement, which the drain waits for. Its fields are those the provisioner reads from every
// message (claim marks it urgent, observedAt dates it); the rest says why, for the logs.
type wakeUp struct {
	Cluster    string    `json:"cluster"`
	Claim      string    `json:"claim"`
	Reason     string    `json:"reason"`
	ObservedAt time.Time `json:"observedAt"`
}

// wakeProvisioner asks for a provisioning run for the pods of claim's Node, once per drain: the FIFO
// deduplication id is the claim and the moment its drain started, so a redelivered request sends the
// same id. Whoever disrupted the claim may have woken the provisioner already (an interruption does);
// a second message costs at most a coalesced batch. Without a provisioning queue configured nothing is
// sent, and the drain waits for the provisioner's schedule instead.
func (s *Service) wakeProvisioner(ctx context.Context, claim, reason string, drainingAt time.Time) error {
	if s.cfg.ProvisioningQueueURL == "" {
		return nil
	}
	body, err := json.Marshal(wakeUp{Cluster: s.cfg.ClusterName, Claim: claim, Reason: reason, ObservedAt: s.deps.Now().UTC()})
	if err != nil {
		return err
	}
	_, err = s.deps.Queue.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:               aws.String(s.cfg.ProvisioningQueueURL),
		MessageBody:            aws.String(string(body)),
		MessageGroupId:         aws.String(provisioningqueue.UrgentGroup(s.cfg.ClusterName, claim)),
		MessageDeduplicationId: aws.String("termination-" + claim + "-" + strconv.FormatInt(drainingAt.UnixMilli(), 10)),
	})
	if err != nil {
		return fmt.Errorf("waking the provisioner for the pods of claim %s: %w", claim, err)
	}
	return nil
}
