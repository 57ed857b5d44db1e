package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/interruptiontest"
)

var eventsDir = interruptiontest.EventsDir(2)

// claimed are the instances the events/ samples name, each with a claim and a Node: spot for the spot
// warning and the rebalance recommendation, on-demand for the others.
var claimed = []interruptiontest.ClaimOptions{
	{Name: "default-spot1", InstanceID: "i-0c4f8a2d61b7e9035", CapacityType: "spot"},
	{Name: "default-rebal", InstanceID: "i-07d2e9b15a3c48f61", CapacityType: "spot"},
	{Name: "default-stop1", InstanceID: "i-0b8e3f1a92c4d7605", CapacityType: "on-demand"},
	{Name: "default-gone1", InstanceID: "i-0f19a6c3d8e2b4570", CapacityType: "on-demand"},
	{Name: "default-odcr1", InstanceID: "i-0a6d4c8e2f1b93750", CapacityType: "reserved"},
	{Name: "default-retire1", InstanceID: "i-03c7e1b9a5d2f6840", CapacityType: "on-demand"},
	{Name: "default-retire2", InstanceID: "i-09f2d8a4c6e1b3750", CapacityType: "on-demand"},
	{Name: "default-running", InstanceID: "i-0e5a7b2c9d1f38640", CapacityType: "on-demand"},
}

// world is the real service over moto (state table, queues) and a fake clientset holding the Nodes.
type world struct {
	*interruptiontest.World
	kube *fake.Clientset
	h    lambda.Handler
	logs *bytes.Buffer
	// stats are what each invocation reported.
	stats []interruption.BatchStats
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{World: interruptiontest.NewWorld(t), kube: fake.NewClientset(), logs: &bytes.Buffer{}}
	for _, o := range claimed {
		o.InstanceType, o.Zone, o.NodeName = "m5.large", "us-west-2a", "node-"+o.Name
		w.InitializedClaim(t, o)
		_, err := w.kube.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: o.NodeName}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	svc := interruption.NewService(interruption.ServiceConfig{ClusterName: interruptiontest.Cluster,
		ProvisioningQueueURL: w.ProvisioningURL, TerminationQueueURL: w.TerminationURL},
		interruption.ServiceDeps{State: w.FunctionStore, Nodes: kube.NewActions(w.kube), Events: kube.NewRecorder(w.kube, kube.RecorderOptions{}),
			Queue: w.FunctionSQS, Log: slog.New(slog.NewJSONHandler(w.logs, nil))})
	w.h = lambda.NewHandler(handler(svc, func(stats interruption.BatchStats) { w.stats = append(w.stats, stats) }))
	return w
}

func (w *world) invoke(t *testing.T, payload []byte) events.SQSEventResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := w.h.Invoke(ctx, payload)
	require.NoError(t, err, "the invocation never fails")
	var resp events.SQSEventResponse
	require.NoError(t, json.Unmarshal(out, &resp))
	return resp
}

func (w *world) claim(t *testing.T, name string) state.Claim {
	c, err := w.Store.GetClaim(context.Background(), name)
	require.NoError(t, err)
	return c
}

func TestSQSBatchSample(t *testing.T) {
	w := newWorld(t)
	resp := w.invoke(t, interruptiontest.Sample(t, eventsDir, "sqs-batch-interruption.json"))
	assert.Empty(t, resp.BatchItemFailures, "duplicates, no-ops, unknown kinds and malformed bodies are acknowledged")

	assert.Len(t, w.Drain(t, w.ProvisioningURL), 4, "spot warning once (its duplicate acts on nothing), two retirements, one shutting down")
	assert.Len(t, w.Drain(t, w.TerminationURL), 4)
	assert.Equal(t, state.Draining, w.claim(t, "default-spot1").Lifecycle)
	assert.Equal(t, state.Draining, w.claim(t, "default-retire1").Lifecycle)
	assert.Equal(t, "ScheduledChange", w.claim(t, "default-retire2").DisruptionReason)
	assert.Equal(t, state.Draining, w.claim(t, "default-gone1").Lifecycle, "handed to the termination flow")
	assert.Equal(t, state.Initialized, w.claim(t, "default-running").Lifecycle)
	_, err := w.kube.CoreV1().Nodes().Get(context.Background(), "node-default-gone1", metav1.GetOptions{})
	assert.NoError(t, err, "the Node is the termination flow's to remove, once the instance is gone")
	n, err := w.kube.CoreV1().Nodes().Get(context.Background(), "node-default-spot1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "karpenter.sh/disrupted", n.Spec.Taints[0].Key)
	require.Len(t, w.stats, 1, "the invocation reports what the batch did")
	stats := w.stats[0]
	assert.Equal(t, map[string]int{"spot_interrupted": 2, "scheduled_change": 1, "instance_terminated": 1, "no_op": 1,
		"unknown": 1, "malformed": 1}, stats.Received)
	assert.Equal(t, 7, stats.Acknowledged)
	assert.Zero(t, stats.Failed)
	assert.Len(t, stats.QueueDurations, 7, "every record carries its SentTimestamp")
	assert.ElementsMatch(t, []interruption.Disruption{
		{NodePool: "default", Reason: "SpotInterruption", CapacityType: "spot"},
		{NodePool: "default", Reason: "InstanceTerminated", CapacityType: "on-demand"},
		{NodePool: "default", Reason: "ScheduledChange", CapacityType: "on-demand"},
		{NodePool: "default", Reason: "ScheduledChange", CapacityType: "on-demand"},
	}, stats.Disrupted, "each claim taken out of service once; the duplicate warning disrupts nothing")

	again := w.invoke(t, interruptiontest.Sample(t, eventsDir, "sqs-batch-interruption.json"))
	assert.Empty(t, again.BatchItemFailures)
	assert.Empty(t, w.Drain(t, w.ProvisioningURL), "a redelivered batch acts on nothing")
	require.Len(t, w.stats, 2)
	assert.Empty(t, w.stats[1].Disrupted, "and disrupts nothing again")
	assert.Equal(t, 7, w.stats[1].Acknowledged)
	assert.Empty(t, w.Drain(t, w.TerminationURL))
}

// TestEventSamples delivers each EventBridge sample alone, as one SQS record, and counts what it asks for.
func TestEventSamples(t *testing.T) {
	for _, tc := range []struct {
		file                       string
		replacements, terminations int
		lifecycle                  map[string]state.Lifecycle
	}{
		{file: "interruption-spot-warning.json", replacements: 1, terminations: 1, lifecycle: map[string]state.Lifecycle{"default-spot1": state.Draining}},
		{file: "interruption-spot-warning-duplicate.json", replacements: 1, terminations: 1},
		{file: "interruption-spot-warning-unknown-instance.json"},
		{file: "interruption-rebalance-recommendation.json", lifecycle: map[string]state.Lifecycle{"default-rebal": state.Initialized}},
		{file: "interruption-state-stopping.json", replacements: 1, terminations: 1, lifecycle: map[string]state.Lifecycle{"default-stop1": state.Draining}},
		{file: "interruption-state-stopped.json", replacements: 1, terminations: 1},
		{file: "interruption-state-shutting-down.json", replacements: 1, terminations: 1, lifecycle: map[string]state.Lifecycle{"default-gone1": state.Draining}},
		{file: "interruption-state-terminated.json", replacements: 1, terminations: 1, lifecycle: map[string]state.Lifecycle{"default-gone1": state.Draining}},
		{file: "interruption-state-running.json"},
		{file: "interruption-capacity-reservation-warning.json", replacements: 1, terminations: 1, lifecycle: map[string]state.Lifecycle{"default-odcr1": state.Draining}},
		{file: "interruption-health-ec2-scheduled-change.json", replacements: 2, terminations: 2},
		{file: "interruption-health-non-ec2.json"},
		{file: "interruption-unknown-detail-type.json"},
		{file: "interruption-malformed-json.json"},
		{file: "interruption-malformed-missing-instance-id.json"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			w := newWorld(t)
			payload, err := json.Marshal(interruptiontest.Batch("m", interruptiontest.Sample(t, eventsDir, tc.file)))
			require.NoError(t, err)
			resp := w.invoke(t, payload)
			assert.Empty(t, resp.BatchItemFailures)
			assert.Len(t, w.Drain(t, w.ProvisioningURL), tc.replacements)
			assert.Len(t, w.Drain(t, w.TerminationURL), tc.terminations)
			for name, want := range tc.lifecycle {
				assert.Equal(t, want, w.claim(t, name).Lifecycle, name)
			}
			assert.Equal(t, 1, bytes.Count(w.logs.Bytes(), []byte(`"messageId":"m-0"`)), "one log line: %s", w.logs.String())
		})
	}
}
