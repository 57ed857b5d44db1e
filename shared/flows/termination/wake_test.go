package termination

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/provisioningqueue"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// provisioningMessages receives (and deletes) what the provisioning queue holds.
func (w *world) provisioningMessages() []sqstypes.Message {
	var out []sqstypes.Message
	for {
		got, err := w.sqs.ReceiveMessage(w.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.provisioningURL),
			MaxNumberOfMessages: 10, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		require.NoError(w.t, err)
		if len(got.Messages) == 0 {
			return out
		}
		for _, m := range got.Messages {
			out = append(out, m)
			_, err := w.sqs.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.provisioningURL), ReceiptHandle: m.ReceiptHandle})
			require.NoError(w.t, err)
		}
	}
}

// A drain the termination flow starts itself (a deleted Node, a removed NodePool, a registration
// timeout handed over by the lifecycle) wakes the provisioner at once, so the replacement the drain waits
// for is launched without waiting for the provisioner's one-minute schedule.
func TestDrainStartWakesTheProvisionerOnce(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.request("NodeDeleted", nil)
	w.pumpOnce()
	require.Contains(t, w.decisionKinds(), "Draining", "the delivery started the drain")

	msgs := w.provisioningMessages()
	require.Len(t, msgs, 1, "one wake-up for the drain")
	var body wakeUp
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(msgs[0].Body)), &body))
	assert.Equal(t, wakeUp{Cluster: testCluster, Claim: w.claim, Reason: "NodeDeleted", ObservedAt: body.ObservedAt}, body)
	assert.Equal(t, provisioningqueue.UrgentGroup(testCluster, w.claim), msgs[0].Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)],
		"the claim's own group: it waits behind no pod wake-up")
	trigger := provisioning.TriggerOf(mustJSON(t, map[string]any{"Records": []map[string]any{{"body": aws.ToString(msgs[0].Body), "eventSource": "aws:sqs"}}}))
	assert.True(t, trigger.Urgent, "the provisioner reads it as a replacement request")

	w.pumpFor(3 * time.Second)
	assert.Empty(t, w.provisioningMessages(), "later deliveries of the request wake nothing more")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// A claim the termination flow removes wakes the disruption function once, so consolidation's next step
// does not wait for its schedule.
func TestRemovedClaimWakesTheDisruptionFunctionOnce(t *testing.T) {
	w := newWorld(t, worldOptions{claim: func(c *state.Claim) {
		c.Lifecycle, c.InstanceID, c.NodeName, c.ProviderID, c.Zone = state.Pending, "", "", "", ""
	}})
	q, err := w.sqs.CreateQueue(w.ctx, &sqs.CreateQueueInput{QueueName: aws.String("disruption-" + w.ns)})
	require.NoError(t, err)
	w.svc.cfg.DisruptionQueueURL = aws.ToString(q.QueueUrl)
	w.request("Underutilized", nil)
	w.pumpUntil(30*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })
	w.pumpFor(2 * time.Second)

	var got []DisruptionWake
	for {
		out, err := w.sqs.ReceiveMessage(w.ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10})
		require.NoError(t, err)
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			var body DisruptionWake
			require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &body))
			got = append(got, body)
			_, err := w.sqs.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
		}
	}
	require.Len(t, got, 1, "one wake-up per removed claim")
	assert.Equal(t, w.claim, got[0].Claim)
	assert.Equal(t, "Underutilized", got[0].Reason)
	assert.Equal(t, testCluster, got[0].Cluster)
}
