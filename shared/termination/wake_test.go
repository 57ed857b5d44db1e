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

	"github.com/nodewright/nodewright/shared/provisioning"
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
	assert.Equal(t, testCluster, msgs[0].Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)], "the cluster's message group: one provisioner at a time")
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
