package sandbox

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/webhooktoken"
	"github.com/nodewright/nodewright/shared/flows/podwebhook"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// webhook serves the pending-pod webhook over HTTPS, as the Function URL does, with the intake the
// webhook function runs, and remembers how long each request took.
//
// It speaks HTTP/1.1 only, with keep-alive, which is what kube-apiserver gets from a Function URL: its
// webhook client asks for HTTP/1.1 alone (ALPN) for every URL that is not a loopback address
// (k8s.io/apiserver/pkg/util/webhook, hookClientConfig), though a Function URL would answer HTTP/2, and
// keeps at most 25 idle connections to it. This server is on 127.0.0.1, where kube-apiserver would take
// HTTP/2 if it were offered and multiplex every call on one connection: better than production, so it is
// not offered (TestSandboxWebhookSpeaksHTTP11Only).
type webhook struct {
	srv       *httptest.Server
	url       string
	caPEM     []byte
	mu        sync.Mutex
	durations []time.Duration
	requests  int
	// conns counts the connections the API server opened (a TLS handshake each).
	conns atomic.Int64
	// answered is when the webhook first answered for an Event about each object (by uid).
	answered map[types.UID]time.Time
	// delay is added to every answer, standing in for a slower network path to the Function URL.
	delay atomic.Int64
}

// webhookSecretName is the name of the secret standing in for the stack's generated token secret.
const webhookSecretName = "nodewright-webhook-token"

// webhookTokens stores token in moto's Secrets Manager, as the CDK stack's generated secret, and returns
// the source the webhook function reads it through.
func webhookTokens(ctx context.Context, cfg aws.Config, token string, log *slog.Logger) (*webhooktoken.Source, error) {
	secrets := secretsmanager.NewFromConfig(cfg)
	out, err := secrets.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(webhookSecretName),
		SecretString: aws.String(token)})
	if err != nil {
		return nil, fmt.Errorf("storing the webhook token in Secrets Manager: %w", err)
	}
	return webhooktoken.New(secrets, webhooktoken.Options{SecretID: aws.ToString(out.ARN), Log: log})
}

// startWebhook serves intake at https://127.0.0.1:<port>/<token>.
func startWebhook(intake *podwebhook.Intake, token string) *webhook {
	w := &webhook{answered: map[types.UID]time.Time{}}
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		body, err := io.ReadAll(io.LimitReader(r.Body, podwebhook.MaxBodyBytes+1))
		if err != nil {
			http.Error(rw, "reading body", http.StatusBadRequest)
			return
		}
		if d := time.Duration(w.delay.Load()); d > 0 {
			time.Sleep(d)
		}
		res := intake.Handle(awscalls.WithFunction(r.Context(), "webhook"), r.URL.Path, body)
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(res.Status)
		_, _ = rw.Write(res.Body)
		answered := time.Now()
		uid := regardingUID(body)
		w.mu.Lock()
		w.durations = append(w.durations, answered.Sub(start))
		w.requests++
		if _, seen := w.answered[uid]; uid != "" && !seen && res.Status == http.StatusOK {
			w.answered[uid] = answered
		}
		w.mu.Unlock()
	}))
	w.srv.EnableHTTP2 = false // see the type's comment
	w.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			w.conns.Add(1)
		}
	}
	w.srv.StartTLS()
	w.url = w.srv.URL + "/" + token
	w.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})
	return w
}

// register creates the ValidatingWebhookConfiguration `nodewright manifests` prints, pointing at w, and
// waits until the API server calls it.
func (w *webhook) register(ctx context.Context, c kubernetes.Interface) error {
	cfg, err := footprint.ValidatingWebhookConfiguration(footprint.WebhookOptions{URL: w.url, CABundle: w.caPEM})
	if err != nil {
		return err
	}
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("registering the webhook: %w", err)
	}
	if err := footprint.AwaitWebhook(ctx, c, metav1.NamespaceDefault, w.count, time.Minute); err != nil {
		return err
	}
	// The probe's dry-run requests are not the latencies the reports are about.
	w.mu.Lock()
	w.durations = nil
	w.mu.Unlock()
	return nil
}

// unregister deletes the webhook configuration and waits until the API server has stopped calling the
// webhook: a dry-run FailedScheduling Event no longer reaches it.
func (w *webhook) unregister(ctx context.Context, c kubernetes.Interface) error {
	if err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, footprint.WebhookConfigName,
		metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the webhook: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for quiet := 0; quiet < 3; {
		before := w.count()
		if err := footprint.SendProbe(ctx, c, metav1.NamespaceDefault); err != nil {
			return fmt.Errorf("probing for the removed webhook: %w", err)
		}
		if w.count() == before {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// count is how many requests the webhook has served.
func (w *webhook) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.requests
}

// connections is how many connections the API server has opened to the webhook.
func (w *webhook) connections() int { return int(w.conns.Load()) }

// latencies returns the handler durations seen so far.
func (w *webhook) latencies() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.durations...)
}

func (w *webhook) close() { w.srv.Close() }

// answeredAt is when the webhook first answered for an Event about the object uid.
func (w *webhook) answeredAt(uid types.UID) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.answered[uid]
	return at, ok
}

// regardingUID is the uid of the object the reviewed Event is about ("" when the body says none): the
// regarding of an events.k8s.io Event, the involvedObject of a core one.
func regardingUID(body []byte) types.UID {
	var review struct {
		Request struct {
			Object struct {
				Regarding      struct{ UID types.UID } `json:"regarding"`
				InvolvedObject struct{ UID types.UID } `json:"involvedObject"`
			} `json:"object"`
		} `json:"request"`
	}
	if json.Unmarshal(body, &review) != nil {
		return ""
	}
	if o := review.Request.Object; o.Regarding.UID != "" {
		return o.Regarding.UID
	}
	return review.Request.Object.InvolvedObject.UID
}
