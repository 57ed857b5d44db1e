package interruption_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/interruptiontest"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// Instances the events/ samples name.
const (
	spotInstance       = "i-0c4f8a2d61b7e9035"
	terminatedInstance = "i-0f19a6c3d8e2b4570"
	rebalanceInstance  = "i-07d2e9b15a3c48f61"
	spotEventID        = "5b3c1f0e-8d2a-4c6b-9e71-a4f0d2c9b813"
)

// env is the service wired as functions/interruption wires it: the state table and both queues in
// moto, Node actions and Events against the local control plane.
type env struct {
	w    *interruptiontest.World
	kube kubernetes.Interface
	svc  *interruption.Service
	logs *syncBuffer
}

type envOptions struct {
	rebalance interruption.RebalancePolicy
	// queue wraps the real SQS client (to inject failures).
	queue func(interruption.MessageSender) interruption.MessageSender
	// store replaces the state store.
	store func(*interruptiontest.World) interruption.StateStore
	// retry replaces the in-invocation retry policy; visibility records requeued messages.
	retry      sqsbatch.Policy
	visibility sqsbatch.VisibilityChanger
}

// processingWindow is short so a test can let it pass on the store's clock.
const processingWindow = 30 * time.Second

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	w := interruptiontest.NewWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{})
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	// The service acts as the interruption function's own identity, with only its ClusterRole's rights.
	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-interruption/test"
	require.NoError(t, footprint.Grant(context.Background(), client, footprint.Interruption, user))
	fnClient, err := kube.NewClientset(cp.As(user, footprint.Interruption.Group()))
	require.NoError(t, err)
	var queue interruption.MessageSender = w.FunctionSQS
	if o.queue != nil {
		queue = o.queue(queue)
	}
	var store interruption.StateStore = w.FunctionStore
	if o.store != nil {
		store = o.store(w)
	}
	e := &env{w: w, kube: client, logs: &syncBuffer{}}
	e.svc = interruption.NewService(interruption.ServiceConfig{ClusterName: interruptiontest.Cluster,
		ProvisioningQueueURL: w.ProvisioningURL, TerminationQueueURL: w.TerminationURL, Rebalance: o.rebalance,
		ProcessingWindow: processingWindow, Retry: o.retry,
	}, interruption.ServiceDeps{State: store, Instances: instance.New(w.FunctionEC2, interruptiontest.Cluster), Nodes: kube.NewActions(fnClient),
		Events: kube.NewRecorder(fnClient, kube.RecorderOptions{Component: "nodewright-interruption"}),
		Queue:  queue, Visibility: o.visibility, Log: slog.New(slog.NewJSONHandler(e.logs, nil))})
	return e
}

// nodeWithPods creates a ready Node running n pods and returns its name.
func (e *env) nodeWithPods(t *testing.T, n int) string {
	t.Helper()
	node := kubetest.ReadyNode(t, e.kube, "ip-"+rand.String(8)+".ec2.internal", nil)
	ns := kubetest.Shared(t, kubetest.Options{}).Namespace(t)
	for i := 0; i < n; i++ {
		_, err := e.kube.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d", i)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	return node
}

func (e *env) claim(t *testing.T, name, instanceID, node string) state.Claim {
	return e.w.InitializedClaim(t, interruptiontest.ClaimOptions{Name: name, InstanceID: instanceID, InstanceType: "m5.large",
		Zone: "us-west-2a", CapacityType: "spot", NodeName: node})
}

func (e *env) handle(t *testing.T, ev events.SQSEvent) events.SQSEventResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return e.svc.HandleBatch(ctx, ev)
}

func (e *env) getClaim(t *testing.T, name string) state.Claim {
	t.Helper()
	c, err := e.w.Store.GetClaim(context.Background(), name)
	require.NoError(t, err)
	return c
}

func (e *env) decisions(t *testing.T, claim string) []state.Decision {
	t.Helper()
	d, err := e.w.Store.Decisions(context.Background(), interruption.ClaimSubject(claim), 100)
	require.NoError(t, err)
	return d
}

func (e *env) nodeEvents(t *testing.T, node string) []string {
	t.Helper()
	list, err := e.kube.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(),
		metav1.ListOptions{FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node})
	require.NoError(t, err)
	var reasons []string
	for _, ev := range list.Items {
		reasons = append(reasons, ev.Reason)
	}
	return reasons
}

func readEvent(t *testing.T, name string) []byte {
	return interruptiontest.Sample(t, eventsDir, name)
}

func steps(ds []state.Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Details["step"])
	}
	return out
}

func TestSpotWarningReplacesFirstThenDrains(t *testing.T) {
	e := newEnv(t, envOptions{})
	node := e.nodeWithPods(t, 3)
	e.claim(t, "default-spot1", spotInstance, node)

	resp := e.handle(t, interruptiontest.Batch("m", readEvent(t, "interruption-spot-warning.json")))
	assert.Empty(t, resp.BatchItemFailures)

	c := e.getClaim(t, "default-spot1")
	assert.Equal(t, state.Draining, c.Lifecycle)
	assert.Equal(t, "SpotInterruption", c.DisruptionReason)
	assert.NotNil(t, c.DrainingAt)

	n, err := e.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Contains(t, taintKeys(n), apis.DisruptedTaintKey+":NoSchedule")

	unavailable, err := e.w.Store.UnavailableOfferings(context.Background())
	require.NoError(t, err)
	if assert.Len(t, unavailable, 1) {
		assert.Equal(t, state.Offering{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: "spot"}, unavailable[0].Offering)
		assert.WithinDuration(t, e.w.Clock.Now().Add(3*time.Minute), unavailable[0].Until(), time.Second)
	}

	replacements := e.w.Drain(t, e.w.ProvisioningURL)
	require.Len(t, replacements, 1)
	var rr interruption.ReplacementRequest
	require.NoError(t, json.Unmarshal([]byte(replacements[0]), &rr))
	assert.Equal(t, interruption.ReplacementRequest{Cluster: "demo", Claim: "default-spot1", Reason: "SpotInterruption",
		EventID: spotEventID, ObservedAt: rr.ObservedAt}, rr)

	terminations := e.w.Drain(t, e.w.TerminationURL)
	require.Len(t, terminations, 1)
	req, err := termination.ParseRequest(terminations[0])
	require.NoError(t, err)
	assert.Equal(t, "default-spot1", req.Claim)
	assert.Equal(t, "SpotInterruption", req.Reason)
	if assert.NotNil(t, req.Deadline) {
		assert.Equal(t, time.Date(2026, 11, 20, 14, 5, 11, 0, time.UTC), *req.Deadline, "two minutes after the warning")
	}

	ds := e.decisions(t, "default-spot1")
	assert.ElementsMatch(t, []string{"MarkOfferingUnavailable", "MarkDisrupted", "TaintNode", "LaunchReplacement", "StartTermination"}, steps(ds))
	for _, d := range ds {
		assert.Equal(t, interruption.DecisionKind, d.Kind)
		assert.Equal(t, "SpotInterrupted", d.Reason)
		assert.Equal(t, spotEventID, d.Details["eventId"])
	}
	require.Eventually(t, func() bool {
		reasons := e.nodeEvents(t, node)
		return contains(reasons, "SpotInterrupted") && contains(reasons, "TerminatingOnInterruption")
	}, 10*time.Second, 100*time.Millisecond, "Events on the Node with Karpenter's reasons")

	t.Run("the same event delivered again acts on nothing", func(t *testing.T) {
		resp := e.handle(t, interruptiontest.Batch("again", readEvent(t, "interruption-spot-warning-duplicate.json"),
			readEvent(t, "interruption-spot-warning.json")))
		assert.Empty(t, resp.BatchItemFailures)
		assert.Empty(t, e.w.Drain(t, e.w.ProvisioningURL))
		assert.Empty(t, e.w.Drain(t, e.w.TerminationURL))
		assert.Len(t, e.decisions(t, "default-spot1"), 5)
		assert.Equal(t, c.Version, e.getClaim(t, "default-spot1").Version, "the claim is not written again")
	})
}

func TestDuplicateStormActsOnce(t *testing.T) {
	e := newEnv(t, envOptions{})
	node := e.nodeWithPods(t, 1)
	e.claim(t, "default-storm", spotInstance, node)
	body := readEvent(t, "interruption-spot-warning.json")

	// 1000 deliveries in batches of 10, four invocations at a time; SQS redelivers what a batch reports
	// as failed (the event held by another invocation) until every delivery is acknowledged.
	pending := make(chan events.SQSEvent, 1000)
	for b := 0; b < 100; b++ {
		bodies := make([][]byte, 10)
		for i := range bodies {
			bodies[i] = body
		}
		pending <- interruptiontest.Batch(fmt.Sprintf("storm-%d", b), bodies...)
	}
	var outstanding atomic.Int64
	outstanding.Store(100)
	var redelivered atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for outstanding.Load() > 0 {
				var ev events.SQSEvent
				select {
				case ev = <-pending:
				case <-time.After(50 * time.Millisecond):
					continue
				}
				resp := e.svc.HandleBatch(context.Background(), ev)
				if len(resp.BatchItemFailures) == 0 {
					outstanding.Add(-1)
					continue
				}
				failed := map[string]bool{}
				for _, f := range resp.BatchItemFailures {
					failed[f.ItemIdentifier] = true
				}
				var retry events.SQSEvent
				for _, r := range ev.Records {
					if failed[r.MessageId] {
						retry.Records = append(retry.Records, r)
					}
				}
				redelivered.Add(int64(len(retry.Records)))
				pending <- retry
			}
		}()
	}
	wg.Wait()
	t.Logf("redelivered %d messages held by another invocation", redelivered.Load())

	assert.Len(t, e.w.Drain(t, e.w.ProvisioningURL), 1)
	assert.Len(t, e.w.Drain(t, e.w.TerminationURL), 1)
	assert.Len(t, e.decisions(t, "default-storm"), 5)
}

func TestShuttingDownInstanceIsHandedToTermination(t *testing.T) {
	e := newEnv(t, envOptions{})
	node := e.nodeWithPods(t, 2)
	e.claim(t, "default-gone", terminatedInstance, node)

	resp := e.handle(t, interruptiontest.Batch("m", readEvent(t, "interruption-state-shutting-down.json")))
	assert.Empty(t, resp.BatchItemFailures)

	// The instance may still run its pods while it shuts down: nothing is deleted here.
	pods, err := e.kube.CoreV1().Pods(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	require.NoError(t, err)
	assert.Len(t, pods.Items, 2, "no pod is force-deleted while the instance shuts down")
	for _, p := range pods.Items {
		assert.Nil(t, p.DeletionTimestamp, "pod %s is not being deleted", p.Name)
	}
	n, err := e.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	require.NoError(t, err, "the Node stays until the termination flow finds the instance terminated")
	assert.Contains(t, taintKeys(n), apis.DisruptedTaintKey+":NoSchedule")

	c := e.getClaim(t, "default-gone")
	assert.Equal(t, state.Draining, c.Lifecycle)
	assert.Equal(t, "InstanceTerminated", c.DisruptionReason)
	assert.Len(t, e.w.Drain(t, e.w.ProvisioningURL), 1, "replacement for the pods it ran")
	terminations := e.w.Drain(t, e.w.TerminationURL)
	require.Len(t, terminations, 1, "the claim is handed to the termination flow")
	req, err := termination.ParseRequest(terminations[0])
	require.NoError(t, err)
	assert.Equal(t, termination.Request{Claim: "default-gone", Reason: "InstanceTerminated", RequestedAt: req.RequestedAt}, req)
	assert.ElementsMatch(t, []string{"MarkDisrupted", "TaintNode", "LaunchReplacement", "StartTermination"}, steps(e.decisions(t, "default-gone")))

	t.Run("terminated after shutting-down is left to the termination under way", func(t *testing.T) {
		resp := e.handle(t, interruptiontest.Batch("late", readEvent(t, "interruption-state-terminated.json")))
		assert.Empty(t, resp.BatchItemFailures)
		assert.Equal(t, c.Version, e.getClaim(t, "default-gone").Version)
		assert.Len(t, e.decisions(t, "default-gone"), 4)
		assert.Empty(t, e.w.Drain(t, e.w.TerminationURL))
		_, err := e.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		assert.NoError(t, err, "the Node is still the termination flow's to remove")
	})
}

func TestRebalanceRecommendation(t *testing.T) {
	t.Run("default policy records an Event only", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		node := e.nodeWithPods(t, 1)
		before := e.claim(t, "default-rebal", rebalanceInstance, node)

		resp := e.handle(t, interruptiontest.Batch("m", readEvent(t, "interruption-rebalance-recommendation.json")))
		assert.Empty(t, resp.BatchItemFailures)
		assert.Equal(t, before, e.getClaim(t, "default-rebal"))
		n, err := e.kube.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		require.NoError(t, err)
		assert.NotContains(t, taintKeys(n), apis.DisruptedTaintKey+":NoSchedule")
		assert.Empty(t, e.w.Drain(t, e.w.ProvisioningURL))
		assert.Empty(t, e.w.Drain(t, e.w.TerminationURL))
		assert.Equal(t, []string{"RecordEvent"}, steps(e.decisions(t, "default-rebal")))
		require.Eventually(t, func() bool { return contains(e.nodeEvents(t, node), "SpotRebalanceRecommendation") },
			10*time.Second, 100*time.Millisecond)
	})
	t.Run("replace policy replaces and drains", func(t *testing.T) {
		e := newEnv(t, envOptions{rebalance: interruption.RebalanceReplace})
		node := e.nodeWithPods(t, 1)
		e.claim(t, "default-rebal", rebalanceInstance, node)

		resp := e.handle(t, interruptiontest.Batch("m", readEvent(t, "interruption-rebalance-recommendation.json")))
		assert.Empty(t, resp.BatchItemFailures)
		assert.Equal(t, state.Draining, e.getClaim(t, "default-rebal").Lifecycle)
		assert.Len(t, e.w.Drain(t, e.w.ProvisioningURL), 1)
		terminations := e.w.Drain(t, e.w.TerminationURL)
		require.Len(t, terminations, 1)
		req, err := termination.ParseRequest(terminations[0])
		require.NoError(t, err)
		assert.Nil(t, req.Deadline, "a recommendation has no deadline")
		unavailable, err := e.w.Store.UnavailableOfferings(context.Background())
		require.NoError(t, err)
		assert.Empty(t, unavailable, "only an interruption says the offering has no capacity")

		// The instance is then reclaimed while it drains: the spot notice's deadline still reaches the
		// termination function, which honours the earliest deadline of any request for the claim.
		warning := strings.ReplaceAll(string(readEvent(t, "interruption-spot-warning.json")), spotInstance, rebalanceInstance)
		resp = e.handle(t, interruptiontest.Batch("later", []byte(warning)))
		assert.Empty(t, resp.BatchItemFailures)
		c := e.getClaim(t, "default-rebal")
		assert.Equal(t, state.Draining, c.Lifecycle)
		assert.Equal(t, "SpotInterruption", c.DisruptionReason, "the notice with the deadline names the reason")
		if assert.NotNil(t, c.GoneBy) {
			assert.Equal(t, time.Date(2026, 11, 20, 14, 5, 11, 0, time.UTC), *c.GoneBy)
		}
		terminations = e.w.Drain(t, e.w.TerminationURL)
		require.Len(t, terminations, 1)
		req, err = termination.ParseRequest(terminations[0])
		require.NoError(t, err)
		if assert.NotNil(t, req.Deadline, "the draining claim gets the spot deadline") {
			assert.Equal(t, time.Date(2026, 11, 20, 14, 5, 11, 0, time.UTC), *req.Deadline)
		}
		assert.Empty(t, e.w.Drain(t, e.w.ProvisioningURL), "the replacement was asked for already")
		assert.ElementsMatch(t, []string{"MarkOfferingUnavailable", "MarkDisrupted", "StartTermination"},
			steps(decisionsOf(e.decisions(t, "default-rebal"), spotEventID)))
	})
}

func TestForeignAndUnreadableMessagesAreAcknowledged(t *testing.T) {
	e := newEnv(t, envOptions{})
	files := []string{"interruption-spot-warning-unknown-instance.json", "interruption-unknown-detail-type.json",
		"interruption-malformed-json.json", "interruption-malformed-missing-instance-id.json",
		"interruption-state-running.json", "interruption-health-non-ec2.json"}
	var bodies [][]byte
	for _, f := range files {
		bodies = append(bodies, readEvent(t, f))
	}
	resp := e.handle(t, interruptiontest.Batch("m", bodies...))
	assert.Empty(t, resp.BatchItemFailures, "never retried")
	assert.Empty(t, e.w.Drain(t, e.w.ProvisioningURL))
	assert.Empty(t, e.w.Drain(t, e.w.TerminationURL))

	lines := e.logs.lines()
	for i := range files {
		id := fmt.Sprintf(`"messageId":"m-%d"`, i)
		n := 0
		for _, l := range lines {
			if strings.Contains(l, id) {
				n++
			}
		}
		assert.Equal(t, 1, n, "one log line for %s", files[i])
	}
	logs := strings.Join(lines, "\n")
	assert.Contains(t, logs, `"field":"detail.instance-id"`)
	assert.Contains(t, logs, `"field":"body"`)
	assert.Contains(t, logs, "does not handle")
	assert.Contains(t, logs, "names no claim")
}

// failOnce fails the first SendMessage, as a crash between TaintNode and LaunchReplacement would stop
// the invocation.
type failOnce struct {
	interruption.MessageSender
	failed atomic.Bool
}

func (f *failOnce) SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if f.failed.CompareAndSwap(false, true) {
		return nil, errors.New("connection reset by peer")
	}
	return f.MessageSender.SendMessage(ctx, in, optFns...)
}

// TestFailureAfterTaintConverges: a message whose handling failed half way (no retry inside the
// invocation here) is redelivered and finishes the steps left, each once; its event claim was given
// back, so the redelivery need not wait for the processing window.
func TestFailureAfterTaintConverges(t *testing.T) {
	e := newEnv(t, envOptions{queue: func(q interruption.MessageSender) interruption.MessageSender {
		return &failOnce{MessageSender: q}
	}, retry: sqsbatch.Policy{Attempts: 1}})
	node := e.nodeWithPods(t, 2)
	e.claim(t, "default-crash", spotInstance, node)
	ev := interruptiontest.Batch("m", readEvent(t, "interruption-spot-warning.json"))

	resp := e.handle(t, ev)
	require.Len(t, resp.BatchItemFailures, 1, "the failed send makes the message a batch failure")
	assert.Equal(t, state.Draining, e.getClaim(t, "default-crash").Lifecycle)
	assert.Empty(t, e.w.Drain(t, e.w.ProvisioningURL))
	assert.Empty(t, e.w.Drain(t, e.w.TerminationURL), "no drain before the replacement")
	assert.ElementsMatch(t, []string{"MarkOfferingUnavailable", "MarkDisrupted", "TaintNode"}, steps(e.decisions(t, "default-crash")))

	resp = e.handle(t, ev)
	assert.Empty(t, resp.BatchItemFailures, "the failed attempt gave its claim back")
	assert.Len(t, e.w.Drain(t, e.w.ProvisioningURL), 1, "exactly one replacement")
	assert.Len(t, e.w.Drain(t, e.w.TerminationURL), 1, "exactly one termination request")
	assert.ElementsMatch(t, []string{"MarkOfferingUnavailable", "MarkDisrupted", "TaintNode", "LaunchReplacement", "StartTermination"},
		steps(e.decisions(t, "default-crash")), "each step recorded once")

	resp = e.handle(t, ev)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Empty(t, e.w.Drain(t, e.w.ProvisioningURL))
	assert.Empty(t, e.w.Drain(t, e.w.TerminationURL))
}

func TestStateErrorsAreBatchFailures(t *testing.T) {
	e := newEnv(t, envOptions{store: func(w *interruptiontest.World) interruption.StateStore {
		return state.New(state.NewClient(w.Config), "no-such-table")
	}})
	resp := e.handle(t, interruptiontest.Batch("m", readEvent(t, "interruption-spot-warning.json"),
		readEvent(t, "interruption-malformed-json.json")))
	assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m-0"}}, resp.BatchItemFailures,
		"the state error is retried, the malformed message is not")
	assert.Contains(t, e.logs.String(), "SQS redelivers it")
}

func taintKeys(n *corev1.Node) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// syncBuffer collects log output from concurrent invocations.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) lines() []string {
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}

// decisionsOf keeps the decision records of one event.
func decisionsOf(ds []state.Decision, eventID string) []state.Decision {
	var out []state.Decision
	for _, d := range ds {
		if d.Details["eventId"] == eventID {
			out = append(out, d)
		}
	}
	return out
}

// recordingVisibility records the visibility changes asked for.
type recordingVisibility struct {
	mu      sync.Mutex
	queue   string
	entries map[string]int32 // receipt handle → seconds
}

func (r *recordingVisibility) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput,
	_ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queue = aws.ToString(in.QueueUrl)
	if r.entries == nil {
		r.entries = map[string]int32{}
	}
	for _, e := range in.Entries {
		r.entries[aws.ToString(e.ReceiptHandle)] = e.VisibilityTimeout
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

// TestTransientFailureIsRetriedInsideTheInvocation: a send that fails once costs a backoff, not a
// redelivery after the queue's visibility timeout; the steps still run once each.
func TestTransientFailureIsRetriedInsideTheInvocation(t *testing.T) {
	vis := &recordingVisibility{}
	e := newEnv(t, envOptions{queue: func(q interruption.MessageSender) interruption.MessageSender {
		return &failOnce{MessageSender: q}
	}, visibility: vis})
	node := e.nodeWithPods(t, 2)
	e.claim(t, "default-retry", spotInstance, node)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, stats := e.svc.Handle(ctx, interruptiontest.Batch("m", readEvent(t, "interruption-spot-warning.json")))
	assert.Empty(t, resp.BatchItemFailures, "the second try inside the invocation succeeded")
	assert.Equal(t, 1, stats.Retries)
	assert.Equal(t, 1, stats.Acknowledged)
	assert.Empty(t, vis.entries, "nothing to requeue")
	assert.Len(t, e.w.Drain(t, e.w.ProvisioningURL), 1, "exactly one replacement")
	assert.Len(t, e.w.Drain(t, e.w.TerminationURL), 1, "exactly one termination request")
	assert.ElementsMatch(t, []string{"MarkOfferingUnavailable", "MarkDisrupted", "TaintNode", "LaunchReplacement", "StartTermination"},
		steps(e.decisions(t, "default-retry")), "each step recorded once")
}

// TestFailedAndUnstartedMessagesComeBackInSeconds: what still failed after its tries, and what the
// invocation had no time left to start, are batch failures made visible again in seconds.
func TestFailedAndUnstartedMessagesComeBackInSeconds(t *testing.T) {
	vis := &recordingVisibility{}
	e := newEnv(t, envOptions{store: func(w *interruptiontest.World) interruption.StateStore {
		return state.New(state.NewClient(w.Config), "no-such-table")
	}, visibility: vis, retry: sqsbatch.Policy{Attempts: 2, BaseDelay: time.Millisecond, Reserve: 3 * time.Second}})
	ev := interruptiontest.Batch("m", readEvent(t, "interruption-spot-warning.json"), readEvent(t, "interruption-rebalance-recommendation.json"))
	ev.Records[0].ReceiptHandle, ev.Records[1].ReceiptHandle = "rh-0", "rh-1"
	// Below FreshCopyAfterReceives: from there on a failed message is copied rather than requeued.
	ev.Records[1].Attributes = map[string]string{"ApproximateReceiveCount": "2"}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, stats := e.svc.Handle(ctx, ev)
	assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m-0"}, {ItemIdentifier: "m-1"}}, resp.BatchItemFailures)
	assert.Equal(t, 2, stats.Retries, "each tried twice")
	assert.Equal(t, "https://sqs.us-east-1.amazonaws.com/123456789012/interruption", vis.queue)
	assert.Equal(t, map[string]int32{"rh-0": 2, "rh-1": 4}, vis.entries, "2 s after the first receive, doubling per receive")

	vis.entries = nil
	soon, cancelSoon := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelSoon()
	resp, stats = e.svc.Handle(soon, ev)
	assert.Len(t, resp.BatchItemFailures, 2)
	assert.Equal(t, 2, stats.Unstarted, "inside the reserve nothing starts")
	assert.Zero(t, stats.Retries)
	assert.Len(t, vis.entries, 2, "and both come back in seconds")
	assert.Contains(t, e.logs.String(), "no time left in the invocation")
}

// TestCapacityReservationWarningMarksTheReservationAndDrains checks that an interruptible reservation's
// interruption warning drains the node like a spot interruption (replacement first) and takes that one
// reservation out of the next solves, as Karpenter marks it unavailable.
func TestCapacityReservationWarningMarksTheReservationAndDrains(t *testing.T) {
	e := newEnv(t, envOptions{})
	node := e.nodeWithPods(t, 1)
	e.w.InitializedClaim(t, interruptiontest.ClaimOptions{Name: "default-icr1", InstanceID: "i-0a6d4c8e2f1b93750", InstanceType: "m5.large",
		Zone: "us-west-2a", CapacityType: "reserved", NodeName: node, ReservationID: "cr-0123456789abcdef0"})

	resp := e.handle(t, interruptiontest.Batch("m", readEvent(t, "interruption-capacity-reservation-warning.json")))
	assert.Empty(t, resp.BatchItemFailures)

	c := e.getClaim(t, "default-icr1")
	assert.Equal(t, state.Draining, c.Lifecycle)
	assert.Equal(t, "CapacityReservationInterruption", c.DisruptionReason)

	unavailable, err := e.w.Store.UnavailableOfferings(context.Background())
	require.NoError(t, err)
	if assert.Len(t, unavailable, 1) {
		assert.Equal(t, state.Offering{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: "reserved",
			ReservationID: "cr-0123456789abcdef0"}, unavailable[0].Offering, "the reservation alone, not every reserved m5.large")
	}
	assert.Len(t, e.w.Drain(t, e.w.ProvisioningURL), 1, "replacement first")
	assert.Len(t, e.w.Drain(t, e.w.TerminationURL), 1)
	assert.ElementsMatch(t, []string{"MarkReservationUnavailable", "MarkDisrupted", "TaintNode", "LaunchReplacement", "StartTermination"},
		steps(e.decisions(t, "default-icr1")))
}
