package e2e

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// lostNodeBound is the time this test allows from a Node's disappearance to its claim's hand-over: the
// lifecycle must not wait for ever, nor act on one look.
const lostNodeBound = 5 * time.Minute

// terminations wires the termination flow as functions/termination does, on the env's queue and clock.
func (e *env) terminations(t testing.TB) *termination.Service {
	t.Helper()
	// The termination flow acts as its own function's identity: the lifecycle's role deletes nothing.
	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-termination/test"
	require.NoError(t, footprint.Grant(context.Background(), e.kube, footprint.Termination, user))
	client, err := kube.NewClientset(kubetest.Shared(t, kubetest.Options{}).As(user, footprint.Termination.Group()))
	require.NoError(t, err)
	return termination.NewService(termination.Config{QueueURL: e.terminationQueue, ProgressDelay: time.Second, BlockedDelay: time.Second,
		Log: slog.New(slog.DiscardHandler)},
		termination.Deps{Store: e.store, Kube: client, Instances: instance.New(e.ec2, cluster), Queue: e.sqs, Now: e.clock.Now})
}

// pumpTerminations hands what the termination queue holds to svc, as the Lambda event source would, and
// deletes what it acknowledged; it returns how many messages it handed over.
func (e *env) pumpTerminations(t testing.TB, svc *termination.Service) int {
	t.Helper()
	ctx := context.Background()
	out, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(e.terminationQueue),
		MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	require.NoError(t, err)
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), EventSource: "aws:sqs"})
	}
	if len(ev.Records) == 0 {
		return 0
	}
	resp := svc.HandleBatch(ctx, ev)
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, rec := range ev.Records {
		if !failed[rec.MessageId] {
			_, err := e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(e.terminationQueue), ReceiptHandle: aws.String(rec.ReceiptHandle)})
			require.NoError(t, err)
		}
	}
	return len(ev.Records)
}

// An operator strips nodewright.sh/termination off a registered Node and deletes it: nothing holds the
// Node, so the deleted-Node hand-over never sees it. The instance still runs. Within a bounded time the
// lifecycle must hand the claim to the termination flow, which terminates the instance and deletes the
// claim (so it no longer counts as capacity); on one look, before the grace, nothing is handed over.
func TestNodeDeletedWithoutItsFinalizerEndsWithTheInstanceTerminated(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launch(t, "default-lost1", "default")
	e.launchedClaim(t, "default-lost1", "default", inst)
	n := e.joinNode(t, "ip-10-0-3-1.ec2.internal", inst, "default")
	r := e.runner(nil)
	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.Registered, rep.String())
	require.Contains(t, e.node(t, n.Name).Finalizers, kube.TerminationFinalizer)

	// kubectl patch node --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'; kubectl delete node
	require.NoError(t, kube.NewActions(e.kube).RemoveFinalizer(ctx, n.Name, kube.TerminationFinalizer))
	require.NoError(t, e.kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}))
	_, err = e.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "nothing holds the Node: %v", err)

	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, e.requested(t), "one look at a missing Node decides nothing destructive: %s", rep)
	assert.Equal(t, "running", e.instanceState(t, inst.ID))

	svc := e.terminations(t)
	handedOver := false
	for step := time.Duration(0); step <= lostNodeBound && !handedOver; step += 30 * time.Second {
		e.clock.set(step)
		rep, err = r.Run(ctx, "run-3")
		require.NoError(t, err)
		handedOver = rep.HandedOver > 0
	}
	require.True(t, handedOver, "the claim of a Node gone for %s is handed to the termination flow", lostNodeBound)
	assert.Contains(t, e.decisions(t, "nodeclaim/default-lost1"), "TerminationRequested/node_lost")
	assert.Equal(t, "running", e.instanceState(t, inst.ID), "the lifecycle terminates nothing itself")

	deadline := time.Now().Add(2 * time.Minute)
	for e.claim(t, "default-lost1").Lifecycle != state.Deleted && time.Now().Before(deadline) {
		e.pumpTerminations(t, svc)
	}
	assert.Equal(t, state.Deleted, e.claim(t, "default-lost1").Lifecycle, "the termination flow finishes the claim")
	assert.Equal(t, "terminated", e.instanceState(t, inst.ID), "the termination flow terminated the instance")
	assert.Contains(t, e.decisions(t, "nodeclaim/default-lost1"), "Deleted/node_lost")
}
