package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// VisibilityChanger changes how long received messages stay invisible; *sqs.Client satisfies it.
type VisibilityChanger interface {
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput,
		optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
}

var _ VisibilityChanger = (*sqs.Client)(nil)

// requeueTimeout bounds the visibility change: it runs when the invocation's own context may be spent.
const requeueTimeout = 2 * time.Second

// maxBatchEntries is the most entries one ChangeMessageVisibilityBatch takes.
const maxBatchEntries = 10

// Visibility is how long a message received receiveCount times stays invisible after failing:
// MinVisibility after the first receive, doubling with each receive, at most MaxVisibility.
func (p Policy) Visibility(receiveCount int) time.Duration {
	p = p.withDefaults()
	v := p.MinVisibility
	for i := 1; i < receiveCount && v < p.MaxVisibility; i++ {
		v *= 2
	}
	return min(v, p.MaxVisibility)
}

// Requeue makes each failed message of queueURL visible again after Visibility(its receive count), so
// SQS redelivers it in seconds. It runs on a context of its own (bounded, detached from ctx's deadline),
// since it is called when the invocation's time is nearly spent. A message whose visibility cannot be
// changed still comes back, after the queue's visibility timeout; the error says which.
func (p Policy) Requeue(ctx context.Context, api VisibilityChanger, queueURL string, failed []events.SQSMessage) error {
	if len(failed) == 0 {
		return nil
	}
	if api == nil || queueURL == "" {
		return errors.New("requeueing failed messages: no queue to requeue them on")
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requeueTimeout)
	defer cancel()
	var errs []error
	for start := 0; start < len(failed); start += maxBatchEntries {
		chunk := failed[start:min(start+maxBatchEntries, len(failed))]
		entries := make([]sqstypes.ChangeMessageVisibilityBatchRequestEntry, len(chunk))
		for i, m := range chunk {
			entries[i] = sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(start + i)),
				ReceiptHandle: aws.String(m.ReceiptHandle), VisibilityTimeout: int32(p.Visibility(receiveCount(m)).Seconds())}
		}
		out, err := api.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
		if err != nil {
			errs = append(errs, fmt.Errorf("requeueing %d failed messages: %w", len(chunk), err))
			continue
		}
		for _, f := range out.Failed {
			i, _ := strconv.Atoi(aws.ToString(f.Id))
			errs = append(errs, fmt.Errorf("requeueing message %s: %s: %s", failed[i].MessageId, aws.ToString(f.Code), aws.ToString(f.Message)))
		}
	}
	return errors.Join(errs...)
}

// receiveCount is the message's ApproximateReceiveCount (1 when absent or unreadable).
func receiveCount(m events.SQSMessage) int {
	n, err := strconv.Atoi(m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// QueueURL is the URL of the queue a record came from: its event source ARN
// (arn:<partition>:sqs:<region>:<account>:<name>) in SQS's URL form; a source that is already a URL (a
// local event source) is returned as it is.
func QueueURL(rec events.SQSMessage) (string, error) {
	src := rec.EventSourceARN
	if strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://") {
		return src, nil
	}
	parts := strings.Split(src, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[3] == "" || parts[4] == "" || parts[5] == "" {
		return "", fmt.Errorf("message %s: event source %q is not an SQS queue ARN", rec.MessageId, src)
	}
	domain := "amazonaws.com"
	if parts[1] == "aws-cn" {
		domain = "amazonaws.com.cn"
	}
	return fmt.Sprintf("https://sqs.%s.%s/%s/%s", parts[3], domain, parts[4], parts[5]), nil
}
