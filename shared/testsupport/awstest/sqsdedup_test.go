package awstest

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSendsStillDeduplicateAsSQSDoes: motoserver.py lets message calls skip the queue's message counts;
// FIFO deduplication must stay SQS's — by id, and by body where the queue deduplicates on content —
// single and batched, receives and deletes must work, and the queue's attributes must still count its
// messages.
func TestSendsStillDeduplicateAsSQSDoes(t *testing.T) {
	ctx := context.Background()
	q := sqs.NewFromConfig(Shared(t).Config())
	byID, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("by-id.fifo"), Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(t, err)
	byBody, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("by-body.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}})
	require.NoError(t, err)

	for i := range 3 {
		_, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: byID.QueueUrl, MessageBody: aws.String(fmt.Sprint("body-", i)),
			MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("same")})
		require.NoError(t, err)
		_, err = q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: byBody.QueueUrl, MessageBody: aws.String("same body"),
			MessageGroupId: aws.String(fmt.Sprint("g", i))})
		require.NoError(t, err)
	}
	var entries []sqstypes.SendMessageBatchRequestEntry
	for i := range 10 {
		entries = append(entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String("b"),
			MessageGroupId: aws.String(fmt.Sprint("g", i)), MessageDeduplicationId: aws.String(fmt.Sprint("d", i%4))})
	}
	out, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: byID.QueueUrl, Entries: entries})
	require.NoError(t, err)
	assert.Empty(t, out.Failed, "a duplicate is accepted and dropped, not failed")

	count := func(url *string) string {
		attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: url,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
				sqstypes.QueueAttributeNameContentBasedDeduplication}})
		require.NoError(t, err)
		return attrs.Attributes["ApproximateNumberOfMessages"] + " " + attrs.Attributes["ContentBasedDeduplication"]
	}
	assert.Equal(t, "5 false", count(byID.QueueUrl), "one for the id \"same\", one for each of d0…d3")
	assert.Equal(t, "1 true", count(byBody.QueueUrl), "one for the body")

	// Receives and deletes still work on the queue, and the counts follow them.
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: byID.QueueUrl, MaxNumberOfMessages: 10})
	require.NoError(t, err)
	assert.Len(t, got.Messages, 5, "one group each")
	_, err = q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: byID.QueueUrl, ReceiptHandle: got.Messages[0].ReceiptHandle})
	require.NoError(t, err)
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: byID.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	require.NoError(t, err)
	assert.Equal(t, "0", attrs.Attributes["ApproximateNumberOfMessages"])
	assert.Equal(t, "4", attrs.Attributes["ApproximateNumberOfMessagesNotVisible"])
}
