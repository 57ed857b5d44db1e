package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nodewright/nodewright/shared/flows/podwebhook"
)

// FloodProvisioningQueue sends n pod references to the provisioning queue as the webhook would for n
// status updates (distinct deduplication ids), ten per call, and returns when all are sent.
func (s *Sandbox) FloodProvisioningQueue(ctx context.Context, n int) error {
	for i := 0; i < n; i += 10 {
		var entries []sqstypes.SendMessageBatchRequestEntry
		for j := i; j < min(i+10, n); j++ {
			body, err := json.Marshal(podwebhook.PodRef{Cluster: Cluster, Namespace: "default", Name: fmt.Sprintf("flood-%d", j),
				UID: fmt.Sprintf("flood-uid-%d", j), ResourceVersion: "1", ObservedAt: time.Now().UTC()})
			if err != nil {
				return err
			}
			entries = append(entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(j)), MessageBody: aws.String(string(body)),
				MessageGroupId: aws.String(Cluster), MessageDeduplicationId: aws.String(fmt.Sprintf("flood-%d-%d", time.Now().UnixNano(), j))})
		}
		out, err := s.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(s.Queues.Provisioning), Entries: entries})
		if err != nil {
			return err
		}
		if len(out.Failed) > 0 {
			return fmt.Errorf("sending to the provisioning queue: %d messages failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
		}
	}
	return nil
}

// QueueDepth is how many messages the queue holds, visible or in flight.
func (s *Sandbox) QueueDepth(ctx context.Context, url string) (int, error) {
	out, err := s.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return 0, err
	}
	total := 0
	for _, k := range []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible} {
		var n int
		if _, err := fmt.Sscan(out.Attributes[string(k)], &n); err != nil {
			return 0, fmt.Errorf("queue attribute %s: %w", k, err)
		}
		total += n
	}
	return total, nil
}
