package provisioning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
)

// revisionCluster serves snapshots whose pod list stands at a settable revision.
type revisionCluster struct {
	mu sync.Mutex
	rv string
	n  int
}

func (c *revisionCluster) Snapshot(context.Context) (*kube.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return &kube.Snapshot{PodsResourceVersion: c.rv}, nil
}

func (c *revisionCluster) set(rv string) { c.mu.Lock(); c.rv = rv; c.mu.Unlock() }
func (c *revisionCluster) runs() int     { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

// podsNow is the API server's current pods, by namespace/name; err fails every read.
type podsNow struct {
	pods map[string]*corev1.Pod
	err  error
}

func (p *podsNow) Pod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if p.err != nil {
		return nil, p.err
	}
	pod, ok := p.pods[ns+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
	}
	return pod, nil
}

func pendingAt(name, uid string, rv int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(uid), ResourceVersion: strconv.Itoa(rv)},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable}}}}
}

// podBatch is a provisioning-queue batch of webhook pod references, sent a minute ago.
func podBatch(t *testing.T, receives int, names ...string) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	for i, n := range names {
		body, err := json.Marshal(map[string]string{"cluster": "demo", "namespace": "shop", "name": n, "uid": "uid-" + n})
		require.NoError(t, err)
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprint("m-", i), ReceiptHandle: fmt.Sprint("rh-", i), Body: string(body),
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:provisioning.fifo",
			Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(time.Now().Add(-time.Minute).UnixMilli(), 10),
				"ApproximateReceiveCount": strconv.Itoa(receives)}})
	}
	return ev
}

func triggerOf(t *testing.T, ev events.SQSEvent) Trigger {
	t.Helper()
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	return TriggerOf(b)
}

// TestABatchIsSatisfiedOnlyByASnapshotThatShowsItsPods: a run that completed after the message was
// sent is not enough when its snapshot predates the pod's Unschedulable status (the webhook is called
// before the API server stores it); Handle runs again until a snapshot's pods reach the pod's revision.
func TestABatchIsSatisfiedOnlyByASnapshotThatShowsItsPods(t *testing.T) {
	cluster := &revisionCluster{rv: "90"}
	w := newTestProvisioner(t, cluster)
	pods := &podsNow{pods: map[string]*corev1.Pod{"shop/web-0": pendingAt("web-0", "uid-web-0", 100)}}
	w.p.deps.Pods = pods
	w.p.cfg.LaunchMargin = 100 * time.Millisecond
	ev := podBatch(t, 1, "web-0")

	out := w.p.Handle(context.Background(), "run-1", triggerOf(t, ev))
	require.NoError(t, out.Err)
	assert.True(t, out.Unsatisfied, "every snapshot stood at revision 90, before the pod's status (100)")
	assert.Equal(t, MaxRunsPerBatch, out.Runs, "it ran again, a bounded number of times")
	assert.Equal(t, out.Runs, cluster.runs())

	// With a deadline, it stops when no run could still launch.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	w.p.cfg.LaunchMargin = 5 * time.Second
	out = w.p.Handle(ctx, "run-1b", triggerOf(t, ev))
	require.NoError(t, out.Err)
	assert.True(t, out.Unsatisfied)
	assert.Equal(t, 1, out.Runs, "the deadline is within the launch margin after the first run")
	w.p.cfg.LaunchMargin = 100 * time.Millisecond

	cluster.set("120")
	out = w.p.Handle(context.Background(), "run-2", triggerOf(t, ev))
	assert.False(t, out.Unsatisfied)
	assert.Equal(t, 1, out.Runs, "one snapshot at 120 shows the pod as it is")

	before := cluster.runs()
	out = w.p.Handle(context.Background(), "run-3", triggerOf(t, podBatch(t, 1, "web-0")))
	assert.True(t, out.Coalesced, "a later message about the same pod, unchanged since: no run")
	assert.Equal(t, before, cluster.runs())
	pods.pods["shop/web-0"] = pendingAt("web-0", "uid-web-0", 130)
	out = w.p.Handle(context.Background(), "run-4", triggerOf(t, podBatch(t, 1, "web-0")))
	assert.False(t, out.Coalesced, "the pod changed after the last snapshot")
	assert.True(t, out.Unsatisfied, "and no snapshot reaches it")
	assert.Equal(t, MaxRunsPerBatch, out.Runs, "bounded without a deadline too")

	cluster.set("140")
	out = w.p.Handle(context.Background(), "run-5", triggerOf(t, podBatch(t, 1, "web-0")))
	assert.Equal(t, 1, out.Runs, "a snapshot at 140 shows the pod's change at 130")
	assert.False(t, out.Unsatisfied)

	bound := pendingAt("bound", "uid-bound", 900)
	bound.Spec.NodeName = "ip-10-0-0-1"
	pods.pods["shop/bound"] = bound
	pods.pods["shop/reborn"] = pendingAt("reborn", "another-uid", 900)
	before = cluster.runs()
	out = w.p.Handle(context.Background(), "run-6", triggerOf(t, podBatch(t, 1, "bound", "gone", "reborn", "web-0")))
	assert.True(t, out.Coalesced, "bound, gone, replaced by another pod of the name, or seen as it is: nothing to do")
	assert.Equal(t, before, cluster.runs())

	pods.err = errors.New("apiserver unavailable")
	out = w.p.Handle(context.Background(), "run-7", triggerOf(t, podBatch(t, 1, "web-0")))
	assert.False(t, out.Coalesced, "a pod that cannot be read never satisfies")
}

// TestABatchWaitsForThePodsStatusThatFollowsItsEvent: kube-scheduler writes the FailedScheduling Event
// (which calls the webhook) before it stores the pod's PodScheduled=False status. A snapshot that has
// reached the pod's revision but not that status cannot show the pod pending, so it does not satisfy the
// batch; once the status is stored and a snapshot reaches it, it does.
func TestABatchWaitsForThePodsStatusThatFollowsItsEvent(t *testing.T) {
	cluster := &revisionCluster{rv: "120"}
	w := newTestProvisioner(t, cluster)
	unmarked := pendingAt("web-0", "uid-web-0", 100)
	unmarked.Status.Conditions = nil
	pods := &podsNow{pods: map[string]*corev1.Pod{"shop/web-0": unmarked}}
	w.p.deps.Pods = pods
	w.p.cfg.LaunchMargin = 100 * time.Millisecond

	out := w.p.Handle(context.Background(), "run-1", triggerOf(t, podBatch(t, 1, "web-0")))
	require.NoError(t, out.Err)
	assert.True(t, out.Unsatisfied, "the pod's status has not been stored yet")

	pods.pods["shop/web-0"] = pendingAt("web-0", "uid-web-0", 110)
	out = w.p.Handle(context.Background(), "run-2", triggerOf(t, podBatch(t, 1, "web-0")))
	assert.False(t, out.Unsatisfied, "stored at 110, and the snapshot at 120 shows it")
}

// visibilityRecorder records the visibility changes asked for.
type visibilityRecorder struct{ handles map[string]int32 }

func (v *visibilityRecorder) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput,
	_ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	for _, e := range in.Entries {
		v.handles[aws.ToString(e.ReceiptHandle)] = e.VisibilityTimeout
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

func TestAnUnsatisfiedBatchComesBackInSecondsAFewTimes(t *testing.T) {
	vis := &visibilityRecorder{handles: map[string]int32{}}
	p := New(Config{}, Dependencies{Visibility: vis})
	ev := podBatch(t, 1, "web-0", "web-1")
	resp := p.BatchResponse(context.Background(), ev, Outcome{Trigger: triggerOf(t, ev), Unsatisfied: true})
	assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m-0"}, {ItemIdentifier: "m-1"}}, resp.BatchItemFailures,
		"the whole FIFO batch goes back")
	assert.Equal(t, map[string]int32{"rh-0": 2, "rh-1": 2}, vis.handles, "visible again in two seconds")

	late := podBatch(t, MaxUnsatisfiedReceives, "web-0")
	assert.Empty(t, p.BatchResponse(context.Background(), late, Outcome{Trigger: triggerOf(t, late), Unsatisfied: true}).BatchItemFailures,
		"after a few receives the backstop takes over: never the dead-letter queue")
	assert.Empty(t, p.BatchResponse(context.Background(), ev, Outcome{Trigger: triggerOf(t, ev)}).BatchItemFailures,
		"a satisfied batch is acknowledged")
}

// flakyCluster fails its first fails snapshots, as an API server under load does past client-go's retries.
type flakyCluster struct {
	revisionCluster
	fails int
}

func (c *flakyCluster) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	c.mu.Lock()
	if c.fails > 0 {
		c.fails--
		c.n++
		c.mu.Unlock()
		return nil, errors.New("listing pods: the server is currently unable to handle the request")
	}
	c.mu.Unlock()
	return c.revisionCluster.Snapshot(ctx)
}

// TestAFailedRunIsRetriedForABatch: a queue batch whose run failed gets another run at once, and is handed
// back if none succeeds, instead of waiting for the backstop.
func TestAFailedRunIsRetriedForABatch(t *testing.T) {
	cluster := &flakyCluster{revisionCluster: revisionCluster{rv: "120"}, fails: 1}
	w := newTestProvisioner(t, cluster)
	w.p.deps.Pods = &podsNow{pods: map[string]*corev1.Pod{"shop/web-0": pendingAt("web-0", "uid-web-0", 100)}}
	ev := podBatch(t, 1, "web-0")

	out := w.p.Handle(context.Background(), "run-1", triggerOf(t, ev))
	require.NoError(t, out.Err, "the second run succeeded")
	assert.Equal(t, 2, out.Runs)
	assert.False(t, out.Unsatisfied)
	assert.True(t, leaseFree(t, w.store), "the failed run let the lease go")

	cluster.fails = 100
	cluster.set("150")
	w.p.deps.Pods = &podsNow{pods: map[string]*corev1.Pod{"shop/web-0": pendingAt("web-0", "uid-web-0", 140)}}
	out = w.p.Handle(context.Background(), "run-2", triggerOf(t, podBatch(t, 1, "web-0")))
	require.Error(t, out.Err)
	assert.Equal(t, MaxRunsPerBatch, out.Runs)
	assert.True(t, out.Unsatisfied, "no run succeeded: the batch goes back")
	assert.NotEmpty(t, w.p.BatchResponse(context.Background(), ev, out).BatchItemFailures)

	out = w.p.Handle(context.Background(), "run-3", Trigger{})
	require.Error(t, out.Err)
	assert.Equal(t, 1, out.Runs, "the schedule runs once; the next schedule retries")
}

// TestAFailedLaunchLeavesTheBatchUnsatisfied: a run whose launch failed (here the launch template, after
// the SDK's retries) decided nothing for those pods: it leaves no mark, so Handle runs again and the
// retry launches.
func TestAFailedLaunchLeavesTheBatchUnsatisfied(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	templates := &flakyTemplates{fails: 1}
	w.p.deps.Templates = templates
	out := w.p.Handle(ctx, "run-1", TriggerOf(batch(t, time.Now().Add(-time.Second))))
	require.NoError(t, out.Err)
	assert.Equal(t, 3, out.Runs, "the failed launch's run, one that launched, and one that found the pod served by "+
		"the claim in flight (after a launch, Handle runs again while a burst may go on)")
	assert.Len(t, out.Launched, 1)
	assert.Empty(t, out.Report.Claims, "the last run launched nothing")
	assert.False(t, out.Unsatisfied)
	mark, err := w.store.Mark(ctx, SnapshotMark)
	require.NoError(t, err)
	assert.False(t, mark.IsZero(), "the run that launched left its mark")
}

// flakyTemplates fails its first fails Ensure calls as a throttled CreateLaunchTemplate does.
type flakyTemplates struct {
	fakeTemplates
	fails int
}

func (f *flakyTemplates) Ensure(ctx context.Context, t launchtemplate.Template) (string, error) {
	if f.fails > 0 {
		f.fails--
		return "", errors.New("operation error EC2: CreateLaunchTemplate, exceeded maximum number of attempts, 3, RequestLimitExceeded")
	}
	return f.fakeTemplates.Ensure(ctx, t)
}
