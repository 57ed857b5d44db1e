package footprint

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/flows/podwebhook"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// recordingQueue keeps what the webhook enqueues.
type recordingQueue struct {
	mu   sync.Mutex
	sent []string
}

func (q *recordingQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, *in.MessageBody)
	return &sqs.SendMessageOutput{}, nil
}

// fixedToken accepts one token; this test is about the API server's calls, the Secrets Manager source has
// its own tests (shared/adapters/webhooktoken).
type fixedToken string

func (f fixedToken) Valid(_ context.Context, presented string) bool { return presented == string(f) }

func (q *recordingQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sent)
}

// hookUnderTest is the intake served over HTTPS and registered with the real API server.
type hookUnderTest struct {
	queue *recordingQueue
	calls atomic.Int32
	mu    sync.Mutex
	seen  []string // per call: "<reason> <kind>/<name>" of the Event it was about
}

// seenSince returns what the calls after the first n were about.
func (h *hookUnderTest) seenSince(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen[n:]...)
}

// registerWebhook serves an intake over HTTPS, registers the webhook configuration pointing at it with the
// real API server (so its CEL match conditions are compiled and run by it), and waits until the API server
// calls it.
func registerWebhook(ctx context.Context, t *testing.T, c kubernetes.Interface, ns string) *hookUnderTest {
	h := &hookUnderTest{queue: &recordingQueue{}}
	intake := &podwebhook.Intake{Cluster: "local", QueueURL: "local", Tokens: fixedToken("s3cr3t-path-token"), Queue: h.queue,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		res := intake.Handle(r.Context(), r.URL.Path, body)
		about := "undecodable"
		if review, err := kube.DecodeEventReview(bytes.NewReader(body), 0); err == nil {
			about = review.Reason + " " + review.Regarding.Kind + "/" + review.Regarding.Name
		}
		h.mu.Lock()
		h.seen = append(h.seen, about)
		h.mu.Unlock()
		h.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.Status)
		_, _ = w.Write(res.Body)
	}))
	t.Cleanup(srv.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	vwc, err := ValidatingWebhookConfiguration(WebhookOptions{URL: srv.URL + "/webhook/s3cr3t-path-token", CABundle: caBundle})
	require.NoError(t, err)
	_, err = c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
	require.NoError(t, err, "the API server accepts the configuration and compiles its match conditions")
	t.Cleanup(func() {
		_ = c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), WebhookConfigName, metav1.DeleteOptions{})
	})
	require.NoError(t, AwaitWebhook(ctx, c, ns, func() int { return int(h.calls.Load()) }, time.Minute))
	return h
}

func podRequesting(name, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// TestMarkingAPodUnschedulableNeverCallsTheWebhook: the status update that marks a pod
// PodScheduled=False/Unschedulable is made inside kube-scheduler's scheduling loop, so the webhook must not
// be on it. (The first registration, on pods/status, was called for exactly this update.)
func TestMarkingAPodUnschedulableNeverCallsTheWebhook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := kubetest.Shared(t, kubetest.Options{})
	c := cp.Client
	ns := cp.Namespace(t)
	h := registerWebhook(ctx, t, c, ns)

	pod := podRequesting("marked", "1")
	pod.Spec.SchedulerName = "no-such-scheduler" // nothing else touches it
	pod, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	before := h.calls.Load()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu.", LastTransitionTime: metav1.Now()}}
	_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	// A FailedScheduling Event created after the update is the webhook's next call: had the update called
	// it, that call would have come first (the API server calls admission webhooks before it answers).
	_, err = c.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "marked-"},
		EventTime: metav1.NowMicro(), ReportingController: "test-scheduler", ReportingInstance: "test-scheduler-1",
		Action: "Scheduling", Reason: "FailedScheduling", Type: corev1.EventTypeWarning, Note: "0/3 nodes are available",
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod.Name, UID: pod.UID}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.EqualValues(t, before+1, h.calls.Load(), "one call, for the Event; none for the status update")
	require.Equal(t, 1, h.queue.count())
	assert.Contains(t, h.queue.sent[0], string(pod.UID))
}

// TestAPIServerCallsTheWebhookOnlyForFailedSchedulingEvents lets the real kube-scheduler fail a pod: the
// API server calls the intake over HTTPS for its FailedScheduling Event, and for no other Event
// (kube-scheduler's Scheduled Events, a core v1 Event about a Node).
func TestAPIServerCallsTheWebhookOnlyForFailedSchedulingEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	c := cp.Client
	ns := cp.Namespace(t)
	h := registerWebhook(ctx, t, c, ns)

	node := kubetest.ReadyNode(t, c, ns+"-node", nil)
	_, err := c.CoreV1().Pods(ns).Create(ctx, podRequesting("fits", "100m"), metav1.CreateOptions{})
	require.NoError(t, err)
	// The scheduler may see the pod before the new node reaches its cache, and then rightly fails it for
	// a moment (and the webhook rightly enqueues it). Count only what comes after it is bound.
	var fits *corev1.Pod
	require.Eventually(t, func() bool {
		fits, err = c.CoreV1().Pods(ns).Get(ctx, "fits", metav1.GetOptions{})
		return err == nil && fits.Spec.NodeName != ""
	}, time.Minute, 50*time.Millisecond, "kube-scheduler binds the pod that fits")
	assert.Equal(t, node, fits.Spec.NodeName)
	h.queue.mu.Lock()
	before, callsBefore := len(h.queue.sent), h.calls.Load()
	h.queue.mu.Unlock()

	tooBig, err := c.CoreV1().Pods(ns).Create(ctx, podRequesting("too-big", "64"), metav1.CreateOptions{})
	require.NoError(t, err)
	for h.queue.count() == before {
		select {
		case <-ctx.Done():
			t.Fatal("the API server never called the webhook for the pod kube-scheduler could not place")
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Events the match conditions filter out: a core v1 Event about a Node, and a pod's Scheduled Event.
	_, err = c.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: ns + "-node-"},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node}, Reason: "FailedScheduling", Message: "not a pod",
		Type: corev1.EventTypeWarning}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "fits-"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "fits", UID: fits.UID}, Reason: "Scheduled",
		Message: "assigned", Type: corev1.EventTypeNormal}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Autoscalers' own FailedScheduling Events: Nodewright's (as its Recorder writes them) and Karpenter's,
	// each naming its component in both places a core Event can, and in only one of them. Each is about a
	// pod of its own, so a call for any of them would show below.
	for _, component := range []string{"nodewright", "nodewright-provisioner", "karpenter"} {
		for k, named := range []struct {
			source    corev1.EventSource
			reporting string
		}{{corev1.EventSource{Component: component}, component}, {corev1.EventSource{Component: component}, ""}, {corev1.EventSource{}, component}} {
			judged := fmt.Sprintf("judged-by-%s-%d", component, k)
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: judged + "-"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: judged, UID: types.UID(judged)}, Reason: "FailedScheduling",
				Message: "Failed to schedule pod, no NodePool offers it", Type: corev1.EventTypeWarning, Source: named.source,
				ReportingController: named.reporting}
			if named.reporting != "" {
				ev.ReportingInstance = component + "-1"
			}
			_, err = c.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
			require.NoError(t, err)
		}
	}
	_, err = c.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "judged-by-karpenter-"},
		EventTime: metav1.NowMicro(), ReportingController: "karpenter", ReportingInstance: "karpenter-1",
		Action: "Scheduling", Reason: "FailedScheduling", Type: corev1.EventTypeWarning, Note: "no NodePool offers it",
		Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: "judged-by-karpenter", UID: "judged-by-karpenter"}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	// A core v1 FailedScheduling Event about a pod (another scheduler's) is let through: after it, the
	// webhook has been called for it, so the calls above that were filtered out have all been decided.
	_, err = c.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: "too-big-"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "too-big", UID: tooBig.UID}, Reason: "FailedScheduling",
		Message: "0/1 nodes are available", Type: corev1.EventTypeWarning}, metav1.CreateOptions{})
	require.NoError(t, err)

	h.queue.mu.Lock()
	defer h.queue.mu.Unlock()
	require.Len(t, h.queue.sent[before:], 1, "the pod is enqueued once, however many Events it gets")
	assert.Contains(t, h.queue.sent[before], `"name":"too-big"`)
	calls := h.seenSince(int(callsBefore))
	assert.GreaterOrEqual(t, len(calls), 2, "kube-scheduler's Event and the core one")
	for _, about := range calls {
		assert.Equal(t, "FailedScheduling Pod/too-big", about, "the API server called the webhook for nothing else")
	}
}
