package termination

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/podwebhook"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// anyToken accepts every webhook path token.
type anyToken struct{}

func (anyToken) Valid(context.Context, string) bool { return true }

// TestUrgentWakeUpIsDeliveredWhileAWakeUpBatchIsStuck: a pod wake-up from the webhook is received by a
// provisioner batch that never finishes (its invocation crashed: the message stays in flight for the
// visibility timeout). A drain's replacement request sent meanwhile is still delivered at once, on the
// real SQS FIFO semantics moto implements (a group with a message in flight delivers nothing).
func TestUrgentWakeUpIsDeliveredWhileAWakeUpBatchIsStuck(t *testing.T) {
	ctx := context.Background()
	client := sqs.NewFromConfig(awstest.Shared(t).Config())
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("provisioning.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "VisibilityTimeout": "360"}})
	require.NoError(t, err)
	url := aws.ToString(q.QueueUrl)

	review, err := os.ReadFile("../../../events/admission-event-failedscheduling.json")
	require.NoError(t, err)
	intake := &podwebhook.Intake{Cluster: testCluster, QueueURL: url, Tokens: anyToken{}, Queue: client,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	res := intake.Handle(ctx, "/webhook/token", review)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))

	receive := func() []sqstypes.Message {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		require.NoError(t, err)
		return out.Messages
	}
	stuck := receive()
	require.Len(t, stuck, 1, "the provisioner's batch takes the wake-up, then its invocation dies")

	s := NewService(Config{QueueURL: "http://termination", ProvisioningQueueURL: url, ClusterName: testCluster},
		Deps{Store: &claimStore{}, Queue: client})
	require.NoError(t, s.wakeProvisioner(ctx, "default-interrupted", "Interrupted", time.Now()))

	urgent := receive()
	require.Len(t, urgent, 1, "the replacement request does not wait for the stuck batch's visibility timeout")
	assert.Contains(t, aws.ToString(urgent[0].Body), `"claim":"default-interrupted"`)
}
