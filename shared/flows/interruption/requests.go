package interruption

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nodewright/nodewright/shared/adapters/provisioningqueue"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// ReplacementRequest is the provisioning-queue message that asks for replacement capacity for a claim
// being disrupted. Like the webhook's pod references it only wakes the provisioner, which solves for
// every pod it finds reschedulable (those of tainted or draining Nodes) in its own snapshot.
type ReplacementRequest struct {
	Cluster    string    `json:"cluster"`
	Claim      string    `json:"claim"`
	Reason     string    `json:"reason"`
	EventID    string    `json:"eventId"`
	ObservedAt time.Time `json:"observedAt"`
}

// ReplacementDeduplicationID is the FIFO deduplication id of the replacement request for claim sent for
// event: a redelivered event sends the same id, and SQS drops the copy within its five-minute window.
func ReplacementDeduplicationID(eventID, claim string) string {
	return "interruption-" + eventID + "-" + claim
}

// sendReplacement wakes the provisioner through the FIFO queue, in the claim's own urgent message group.
func (s *Service) sendReplacement(ctx context.Context, msg messages.Message, claim, reason string) error {
	body, err := json.Marshal(ReplacementRequest{Cluster: s.cfg.ClusterName, Claim: claim, Reason: reason,
		EventID: msg.EventID(), ObservedAt: s.deps.Now().UTC()})
	if err != nil {
		return err
	}
	_, err = s.deps.Queue.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:               aws.String(s.cfg.ProvisioningQueueURL),
		MessageBody:            aws.String(string(body)),
		MessageGroupId:         aws.String(provisioningqueue.UrgentGroup(s.cfg.ClusterName, claim)),
		MessageDeduplicationId: aws.String(ReplacementDeduplicationID(msg.EventID(), claim)),
	})
	if err != nil {
		return fmt.Errorf("sending the replacement request for claim %s to the provisioning queue: %w", claim, err)
	}
	return nil
}

// sendTermination asks functions/termination to drain the claim's Node and terminate its instance,
// by deadline when there is one.
func (s *Service) sendTermination(ctx context.Context, claim, reason string, deadline time.Time) error {
	req := termination.Request{Claim: claim, Reason: reason, RequestedAt: s.deps.Now().UTC()}
	if !deadline.IsZero() {
		d := deadline.UTC()
		req.Deadline = &d
	}
	return termination.NewSender(s.deps.Queue, s.cfg.TerminationQueueURL).Send(ctx, req)
}
