package interruption_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/interruptiontest"
)

// outageStore is the function's state store while the state table is down until the world's clock
// reaches until: every call that starts a message then reaches a table that does not answer (moto's
// ResourceNotFound), and the message fails as it would on DynamoDB 5xx answers.
type outageStore struct {
	interruption.StateStore
	down  interruption.StateStore
	w     *interruptiontest.World
	until time.Time
}

func (s *outageStore) BeginEvent(ctx context.Context, scope, id, owner string, processing time.Duration) (state.Outcome, error) {
	if s.w.Clock.Now().Before(s.until) {
		return s.down.BeginEvent(ctx, scope, id, owner, processing)
	}
	return s.StateStore.BeginEvent(ctx, scope, id, owner, processing)
}

// noEvents drops Kubernetes Events (best effort; this test has no API server).
type noEvents struct{}

func (noEvents) Publish(context.Context, kube.Event) (bool, error) { return true, nil }

// TestANoticeSurvivesAFiveMinuteStateOutage: a spot notice arrives while the state table is down for
// five minutes. The interruption queue is set up as infra does (maxReceiveCount 5, then the dead-letter
// queue) in moto, whose SQS counts receives and dead-letters as SQS does; each delivery fails, well over
// five times. The notice must not reach the dead-letter queue: once the table is back it is handled —
// replacement requested and the drain handed to termination.
func TestANoticeSurvivesAFiveMinuteStateOutage(t *testing.T) {
	ctx := context.Background()
	w := interruptiontest.NewWorld(t)
	w.InitializedClaim(t, interruptiontest.ClaimOptions{Name: "default-outage", InstanceID: spotInstance, InstanceType: "m5.large",
		Zone: "us-west-2a", CapacityType: "spot"})
	outage := &outageStore{StateStore: w.FunctionStore, down: state.New(state.NewClient(w.Config), "no-such-table"), w: w,
		until: w.Clock.Now().Add(5 * time.Minute)}
	// One try per delivery and no requeue: SQS's own redelivery is what this test counts. Visibility is
	// the shortest SQS takes, so fresh copies come back after one second.
	svc := interruption.NewService(interruption.ServiceConfig{ClusterName: interruptiontest.Cluster,
		ProvisioningQueueURL: w.ProvisioningURL, TerminationQueueURL: w.TerminationURL,
		Retry: sqsbatch.Policy{Attempts: 1, MinVisibility: time.Millisecond, MaxVisibility: time.Millisecond}},
		interruption.ServiceDeps{State: outage, Events: noEvents{}, Queue: w.FunctionSQS, Now: w.Clock.Now,
			Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})

	// A failed delivery is visible again at once (Lambda would requeue it in seconds); the receive count
	// is what matters.
	_, err := w.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(w.InterruptionURL),
		Attributes: map[string]string{"VisibilityTimeout": "0"}})
	require.NoError(t, err)
	_, err = w.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(w.InterruptionURL),
		MessageBody: aws.String(string(readEvent(t, "interruption-spot-warning.json")))})
	require.NoError(t, err)

	failures, handled := 0, false
	for round := 0; round < 60 && !handled; round++ {
		out, err := w.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(w.InterruptionURL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 2,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"}})
		require.NoError(t, err)
		if len(out.Messages) == 0 {
			dead := w.Drain(t, w.InterruptionDeadLetterURL)
			require.Empty(t, dead, "the notice reached the dead-letter queue after %d failed deliveries", failures)
			continue // a fresh copy is on its delay
		}
		ev := lambdaBatch(w.InterruptionURL, out.Messages)
		invocation, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp := svc.HandleBatch(invocation, ev)
		cancel()
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, m := range out.Messages {
			if failed[aws.ToString(m.MessageId)] {
				failures++
				continue // back at once: the visibility timeout is 0
			}
			// Acknowledged, as Lambda deletes a batch's successful messages.
			_, err := w.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(w.InterruptionURL), ReceiptHandle: m.ReceiptHandle})
			require.NoError(t, err)
			if !w.Clock.Now().Before(outage.until) {
				handled = true
			}
		}
		w.Clock.Advance(20 * time.Second) // redeliveries over the outage: 15 of them in five minutes
	}
	require.True(t, handled, "the notice was handled once the table was back (%d failed deliveries before)", failures)
	assert.Greater(t, failures, interruptiontest.MaxReceiveCount, "the outage outlasted the queue's maxReceiveCount")
	assert.Empty(t, w.Drain(t, w.InterruptionDeadLetterURL))
	terminations := w.Drain(t, w.TerminationURL)
	require.Len(t, terminations, 1, "the drain was handed to termination")
	assert.Contains(t, terminations[0], `"claim":"default-outage"`)
	replacements := w.Drain(t, w.ProvisioningURL)
	require.Len(t, replacements, 1)
	assert.True(t, strings.Contains(replacements[0], `"claim":"default-outage"`))
}

// lambdaBatch turns received messages into the Lambda SQS event the function gets: attributes, message
// attributes and the queue as the event source.
func lambdaBatch(queueURL string, msgs []sqstypes.Message) events.SQSEvent {
	var ev events.SQSEvent
	for _, m := range msgs {
		rec := events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: map[string]events.SQSMessageAttribute{},
			EventSource: "aws:sqs", EventSourceARN: queueURL}
		for name, a := range m.MessageAttributes {
			rec.MessageAttributes[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue}
		}
		ev.Records = append(ev.Records, rec)
	}
	return ev
}
