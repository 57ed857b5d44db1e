package interruption_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/interruptiontest"
)

// callOrder notes, in order, the Events published and the messages sent by one service.
type callOrder struct {
	mu    sync.Mutex
	calls []string
	sqs   interruption.MessageSender
}

func (o *callOrder) note(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, s)
}

func (o *callOrder) Publish(_ context.Context, e kube.Event) (bool, error) {
	o.note("event " + string(e.Reason) + " on " + e.Object.Kind)
	return true, nil
}

func (o *callOrder) SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	o.note("send " + aws.ToString(in.QueueUrl))
	return o.sqs.SendMessage(ctx, in, opts...)
}

// TestTheReplacementRequestGoesOutBeforeAnyEvent: on a spot notice the replacement is on the interruption's
// clock (two minutes), while Events are best effort and each NodeClaim Event may first look up its
// mirror's UID. So nothing is published before the provisioner has been asked for the replacement.
func TestTheReplacementRequestGoesOutBeforeAnyEvent(t *testing.T) {
	w := interruptiontest.NewWorld(t)
	w.InitializedClaim(t, interruptiontest.ClaimOptions{Name: "default-order", InstanceID: spotInstance, InstanceType: "m5.large",
		Zone: "us-west-2a", CapacityType: "spot"})
	order := &callOrder{sqs: w.FunctionSQS}
	svc := interruption.NewService(interruption.ServiceConfig{ClusterName: interruptiontest.Cluster,
		ProvisioningQueueURL: w.ProvisioningURL, TerminationQueueURL: w.TerminationURL},
		interruption.ServiceDeps{State: w.FunctionStore, Events: order, Queue: order, Now: w.Clock.Now,
			Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})

	resp, _ := svc.Handle(context.Background(), interruptiontest.Batch("m", readEvent(t, "interruption-spot-warning.json")))
	require.Empty(t, resp.BatchItemFailures)

	require.NotEmpty(t, order.calls)
	require.Equal(t, "send "+w.ProvisioningURL, order.calls[0], "the replacement request comes first: %v", order.calls)
	require.Contains(t, order.calls, "send "+w.TerminationURL)
	events := 0
	for _, c := range order.calls {
		if strings.HasPrefix(c, "event ") {
			events++
		}
	}
	require.Positive(t, events, "the Events are still published: %v", order.calls)
}
