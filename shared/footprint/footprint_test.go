package footprint

import (
	"context"
	"encoding/pem"
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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/kubetest"
	"github.com/nodewright/nodewright/shared/podwebhook"
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
// its own tests (shared/webhooktoken).
type fixedToken string

func (f fixedToken) Valid(_ context.Context, presented string) bool { return presented == string(f) }

func (q *recordingQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sent)
}

// TestAPIServerCallsTheWebhookOnlyForUnschedulablePods registers the webhook with the real API server
// (so its CEL match conditions are compiled and run by it) and lets kube-scheduler mark a pod
// Unschedulable: the API server calls the intake over HTTPS for that pod and for no other status update.
func TestAPIServerCallsTheWebhookOnlyForUnschedulablePods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	c := cp.Client
	ns := cp.Namespace(t)

	queue := &recordingQueue{}
	var calls atomic.Int32
	intake := &podwebhook.Intake{Cluster: "local", QueueURL: "local", Tokens: fixedToken("s3cr3t-path-token"), Queue: queue,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		res := intake.Handle(r.Context(), r.URL.Path, body)
		calls.Add(1)
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
	require.NoError(t, AwaitWebhook(ctx, c, ns, func() int { return int(calls.Load()) }, time.Minute))

	node := kubetest.ReadyNode(t, c, ns+"-node", nil)
	pod := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	_, err = c.CoreV1().Pods(ns).Create(ctx, pod("fits", "100m"), metav1.CreateOptions{})
	require.NoError(t, err)
	// The scheduler may see the pod before the new node reaches its cache, and then rightly marks it
	// Unschedulable for a moment (and the webhook rightly enqueues it). Count only what comes after it is
	// bound.
	var fits *corev1.Pod
	require.Eventually(t, func() bool {
		fits, err = c.CoreV1().Pods(ns).Get(ctx, "fits", metav1.GetOptions{})
		return err == nil && fits.Spec.NodeName != ""
	}, time.Minute, 50*time.Millisecond, "kube-scheduler binds the pod that fits")
	assert.Equal(t, node, fits.Spec.NodeName)
	queue.mu.Lock()
	before, probeCalls := len(queue.sent), calls.Load()
	queue.mu.Unlock()

	_, err = c.CoreV1().Pods(ns).Create(ctx, pod("too-big", "64"), metav1.CreateOptions{})
	require.NoError(t, err)
	for queue.count() == before {
		select {
		case <-ctx.Done():
			t.Fatal("the API server never called the webhook for the unschedulable pod")
		case <-time.After(100 * time.Millisecond):
		}
	}
	// A status update of a bound pod (what a kubelet sends) is filtered out by the match conditions.
	fits.Status.Phase = corev1.PodRunning
	_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, fits, metav1.UpdateOptions{})
	require.NoError(t, err)
	time.Sleep(time.Second)

	queue.mu.Lock()
	defer queue.mu.Unlock()
	for _, m := range queue.sent[before:] {
		assert.Contains(t, m, `"name":"too-big"`, "only the unschedulable pod is enqueued")
	}
	assert.EqualValues(t, len(queue.sent)-before, calls.Load()-probeCalls, "the API server called the webhook for nothing else")
}
