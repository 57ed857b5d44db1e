package footprint

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/flows/podwebhook"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// costHook is the intake served over HTTPS for the cost benchmark, counting the TLS connections the API
// server opens to it and the requests it has in hand at once.
type costHook struct {
	srv                  *httptest.Server
	calls, conns         atomic.Int64
	inFlight, mostAtOnce atomic.Int64
}

// serveCostHook serves the intake with answers delayed by delay. With http2 the server offers HTTP/2 as
// well as HTTP/1.1; kube-apiserver asks for HTTP/2 only from a webhook on a loopback address (a Function
// URL gets HTTP/1.1 whatever it offers), so that case says what HTTP/2 would save, not what production
// gets.
func serveCostHook(tb testing.TB, delay time.Duration, http2 bool) *costHook {
	h := &costHook{}
	intake := &podwebhook.Intake{Cluster: "local", QueueURL: "local", Tokens: fixedToken("s3cr3t-path-token"), Queue: &recordingQueue{},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		for most := h.mostAtOnce.Load(); n > most && !h.mostAtOnce.CompareAndSwap(most, n); most = h.mostAtOnce.Load() {
		}
		body, _ := io.ReadAll(r.Body)
		time.Sleep(delay)
		res := intake.Handle(r.Context(), r.URL.Path, body)
		h.calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.Status)
		_, _ = w.Write(res.Body)
	}))
	h.srv.EnableHTTP2 = http2
	h.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			h.conns.Add(1)
		}
	}
	h.srv.StartTLS()
	tb.Cleanup(h.srv.Close)
	return h
}

func (h *costHook) register(ctx context.Context, tb testing.TB, c kubernetes.Interface, ns string) {
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw})
	vwc, err := ValidatingWebhookConfiguration(WebhookOptions{URL: h.srv.URL + "/webhook/s3cr3t-path-token", CABundle: caBundle})
	require.NoError(tb, err)
	_, err = c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
	require.NoError(tb, err)
	tb.Cleanup(func() {
		_ = c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), WebhookConfigName, metav1.DeleteOptions{})
	})
	require.NoError(tb, AwaitWebhook(ctx, c, ns, func() int { return int(h.calls.Load()) }, time.Minute))
}

// createFailedSchedulingEvents creates n FailedScheduling Events about distinct pods, as kube-scheduler
// writes them (events.k8s.io/v1), from writers goroutines at once.
func createFailedSchedulingEvents(ctx context.Context, tb testing.TB, c kubernetes.Interface, ns, prefix string, n, writers int) {
	inParallel(tb, n, writers, func(i int64) error {
		pod := fmt.Sprintf("%s-%05d", prefix, i)
		_, err := c.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: pod + ".1"},
			EventTime: metav1.NowMicro(), ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-bench",
			Action: "Scheduling", Reason: "FailedScheduling", Type: corev1.EventTypeWarning,
			Note: "0/0 nodes are available: no nodes available to schedule pods.",
			Regarding: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: pod,
				UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)), ResourceVersion: "1"}}, metav1.CreateOptions{})
		return err
	})
}

// BenchmarkAPIServerCPUPerWebhookCall measures what a webhook call costs kube-apiserver: its CPU time
// (from /proc) while 1,000 FailedScheduling Events (200 for the slowest answers) are created by `writers` clients at once, with no
// webhook registered and with the pending-pod webhook registered (answers delayed as a Function URL's
// round trip would be), and the TLS connections the API server opened to the webhook. Metrics per
// Event: apiserver-ms/event is kube-apiserver's CPU, calls/event the webhook's requests, conns the new
// connections over the whole run, most-in-flight the most requests the webhook had at once.
//
//	go test ./shared/adapters/footprint -run '^$' -bench APIServerCPUPerWebhookCall -benchtime 3x
func BenchmarkAPIServerCPUPerWebhookCall(b *testing.B) {
	cases := []struct {
		name    string
		hook    bool
		http2   bool
		delay   time.Duration
		writers int
		events  int // default 1,000
	}{
		{name: "no-webhook/writers=16", writers: 16},
		{name: "http1.1/delay=50ms/writers=16", hook: true, delay: 50 * time.Millisecond, writers: 16},
		{name: "http1.1/delay=0/writers=16", hook: true, writers: 16},
		{name: "no-webhook/writers=64", writers: 64},
		{name: "http1.1/delay=50ms/writers=64", hook: true, delay: 50 * time.Millisecond, writers: 64},
		{name: "http2/delay=50ms/writers=64", hook: true, http2: true, delay: 50 * time.Millisecond, writers: 64},
		// Answers later than the registration's 1 s timeout: the API server gives up on the call and, over
		// HTTP/1.1, must drop its connection.
		{name: "http1.1/delay=1.2s/writers=16", hook: true, delay: 1200 * time.Millisecond, writers: 16, events: 200},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			events := tc.events
			if events == 0 {
				events = 1000
			}
			ctx := context.Background()
			cp := kubetest.Shared(b, kubetest.Options{})
			ns := cp.Namespace(b)
			pid, ok := cp.PIDs()["kube-apiserver"]
			require.True(b, ok, "kube-apiserver runs")
			var h *costHook
			if tc.hook {
				h = serveCostHook(b, tc.delay, tc.http2)
				h.register(ctx, b, cp.Client, ns)
			}
			var calls0, conns0 int64
			if h != nil {
				calls0, conns0 = h.calls.Load(), h.conns.Load()
			}
			var cpu time.Duration
			b.ResetTimer()
			for i := range b.N {
				before, err := testenv.CPUTime(pid)
				require.NoError(b, err)
				createFailedSchedulingEvents(ctx, b, cp.Client, ns, fmt.Sprintf("run%d", i), events, tc.writers)
				after, err := testenv.CPUTime(pid)
				require.NoError(b, err)
				cpu += after - before
			}
			b.StopTimer()
			total := float64(b.N * events)
			b.ReportMetric(float64(cpu.Microseconds())/1000/total, "apiserver-ms/event")
			if h != nil {
				b.ReportMetric(float64(h.calls.Load()-calls0)/total, "calls/event")
				b.ReportMetric(float64(h.conns.Load()-conns0), "conns")
				b.ReportMetric(float64(h.mostAtOnce.Load()), "most-in-flight")
			}
		})
	}
}
