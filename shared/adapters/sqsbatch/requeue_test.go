package sqsbatch

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

func TestQueueURLFromTheEventSource(t *testing.T) {
	for src, want := range map[string]string{
		"arn:aws:sqs:eu-west-1:123456789012:nodewright-interruption": "https://sqs.eu-west-1.amazonaws.com/123456789012/nodewright-interruption",
		"arn:aws-cn:sqs:cn-north-1:123456789012:q":                   "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q",
		"http://127.0.0.1:5000/123456789012/q":                       "http://127.0.0.1:5000/123456789012/q",
	} {
		got, err := QueueURL(events.SQSMessage{EventSourceARN: src})
		require.NoError(t, err, src)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"", "arn:aws:sns:us-east-1:123456789012:topic", "arn:aws:sqs:us-east-1::q", "garbage"} {
		_, err := QueueURL(events.SQSMessage{MessageId: "m-1", EventSourceARN: bad})
		assert.ErrorContains(t, err, "is not an SQS queue ARN", bad)
	}
}

// TestRequeueBringsAFailedMessageBackInSeconds: against moto's SQS, a failed message received from a
// queue with a two-minute visibility timeout comes back after its short requeue visibility.
func TestRequeueBringsAFailedMessageBackInSeconds(t *testing.T) {
	ctx := context.Background()
	client := sqs.NewFromConfig(awstest.Shared(t).Config())
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("requeue"),
		Attributes: map[string]string{"VisibilityTimeout": "120"}})
	require.NoError(t, err)
	url := aws.ToString(q.QueueUrl)
	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("spot notice")})
	require.NoError(t, err)
	receive := func() []sqstypes.Message {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		require.NoError(t, err)
		return out.Messages
	}
	got := receive()
	require.Len(t, got, 1)
	failed := []events.SQSMessage{{MessageId: aws.ToString(got[0].MessageId), ReceiptHandle: aws.ToString(got[0].ReceiptHandle),
		Attributes: got[0].Attributes}}
	require.NoError(t, Policy{MinVisibility: time.Second}.Requeue(ctx, client, url, failed))
	assert.Empty(t, receive(), "invisible right after the requeue")
	require.Eventually(t, func() bool { return len(receive()) == 1 }, 10*time.Second, 250*time.Millisecond,
		"back after about a second, not after the queue's two minutes")

	err = Policy{}.Requeue(ctx, client, url, []events.SQSMessage{{MessageId: "gone", ReceiptHandle: "not-a-handle"}})
	assert.Error(t, err, "a visibility SQS refuses to change is reported")
	assert.ErrorContains(t, Policy{}.Requeue(ctx, nil, "", failed), "no queue")
	assert.NoError(t, Policy{}.Requeue(ctx, nil, "", nil), "nothing failed, nothing to do")
}
