package termination

import (
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// queued counts the termination queue's messages, visible, delayed (re-drives) or in flight.
func (w *world) queued() int {
	out, err := w.sqs.GetQueueAttributes(w.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(w.queueURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	require.NoError(w.t, err)
	n := 0
	for _, v := range out.Attributes {
		c, err := strconv.Atoi(v)
		require.NoError(w.t, err)
		n += c
	}
	return n
}

// A drain a PDB blocks is requested again while its chain runs — the lifecycle's stalled-drain rule, a
// consolidation's re-send, another notice. However often, one chain of re-drives per claim goes on.
func TestRequestsAgainForABlockedDrainLeaveOneChain(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.replicaSet("web", 2, 1)
	w.waitReady(2)
	w.pdb("web", intstr.FromInt32(0))

	w.request("Drifted", nil)
	w.pumpFor(5 * time.Second)
	require.True(t, w.claimIs(state.Draining))
	require.Equal(t, 1, w.queued(), "the blocked drain is re-driven")

	w.request("Drifted", nil) // the stalled-drain rule
	w.request("Drifted", nil) // a consolidation's re-send
	w.pumpFor(10 * time.Second)
	assert.Equal(t, 1, w.queued(), "one chain per claim")
	assert.True(t, w.claimIs(state.Draining), "the drain goes on")
	assert.Equal(t, "running", w.instanceState())
}
