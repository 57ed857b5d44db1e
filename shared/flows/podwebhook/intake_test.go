package podwebhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/webhooktoken"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

const token = "3f9c2d7e61b04a8fa5d2c1e0b7a94f62"

var observed = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// sample is the AdmissionReview kube-apiserver sends when kube-scheduler creates a FailedScheduling Event.
func sample(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../events/admission-event-failedscheduling.json")
	require.NoError(t, err)
	return b
}

// withEvent rewrites the sample's Event: change edits its object.
func withEvent(t testing.TB, change func(obj map[string]any)) []byte {
	t.Helper()
	var review map[string]any
	require.NoError(t, json.Unmarshal(sample(t), &review))
	change(review["request"].(map[string]any)["object"].(map[string]any))
	out, err := json.Marshal(review)
	require.NoError(t, err)
	return out
}

func newIntake(t testing.TB) (*Intake, *sqs.Client, string) {
	t.Helper()
	in, client, url, _ := newIntakeWithSecret(t, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	return in, client, url
}

// newIntakeWithSecret wires the intake as the webhook function does: the token from moto's Secrets
// Manager (holding token), the queue in moto's SQS, both logging to log. It returns the secret's ARN.
func newIntakeWithSecret(t testing.TB, log *slog.Logger) (*Intake, *sqs.Client, string, string) {
	t.Helper()
	moto := awstest.Shared(t)
	client := sqs.NewFromConfig(moto.Config())
	q, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("provisioning.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(t, err)
	secrets := secretsmanager.NewFromConfig(moto.Config())
	secret, err := secrets.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: aws.String("webhook-token"),
		SecretString: aws.String(token)})
	require.NoError(t, err)
	tokens, err := webhooktoken.New(secrets, webhooktoken.Options{SecretID: aws.ToString(secret.ARN), Log: log})
	require.NoError(t, err)
	return &Intake{Cluster: "demo", QueueURL: aws.ToString(q.QueueUrl), Tokens: tokens, Queue: client,
		Log: log, Now: func() time.Time { return observed }}, client, aws.ToString(q.QueueUrl), aws.ToString(secret.ARN)
}

func receiveAll(t *testing.T, client *sqs.Client, url string) []sqstypes.Message {
	t.Helper()
	out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	require.NoError(t, err)
	return out.Messages
}

// TestAPodsEventsAreCoalescedIntoOneWakeUp: kube-scheduler creates a new Event for a pod each time its
// message about the pod changes (the pod's resourceVersion in regarding changes with it), and the API
// server may call again for the same creation; the pod gets one wake-up.
func TestAPodsEventsAreCoalescedIntoOneWakeUp(t *testing.T) {
	in, client, url := newIntake(t)
	var results []string
	for i := 0; i < 3; i++ {
		body := withEvent(t, func(obj map[string]any) {
			obj["regarding"].(map[string]any)["resourceVersion"] = fmt.Sprint(482913 + i)
		})
		res := in.Handle(context.Background(), "/webhook/"+token, body)
		require.Equal(t, http.StatusOK, res.Status, string(res.Body))
		results = append(results, res.Result)
		var review struct {
			APIVersion string `json:"apiVersion"`
			Response   struct {
				UID     string `json:"uid"`
				Allowed bool   `json:"allowed"`
			} `json:"response"`
		}
		require.NoError(t, json.Unmarshal(res.Body, &review))
		assert.Equal(t, "admission.k8s.io/v1", review.APIVersion)
		assert.True(t, review.Response.Allowed)
		assert.Equal(t, "6b7c1d2e-4f3a-4e8b-9c1d-0a2b3c4d5e6f", review.Response.UID)
	}
	assert.Equal(t, []string{ResultEnqueued, ResultCoalesced, ResultCoalesced}, results, "the metrics tell a send from a coalesced one")
	msgs := receiveAll(t, client, url)
	require.Len(t, msgs, 1, "the FIFO queue deduplicates by pod uid")
	assert.Equal(t, "demo/pod/0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f", msgs[0].Attributes["MessageGroupId"],
		"the pod's own group: a stuck batch holds back no other pod")
	var ref PodRef
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(msgs[0].Body)), &ref))
	assert.Equal(t, "demo", ref.Cluster)
	assert.Equal(t, "482913", ref.ResourceVersion)
	assert.Equal(t, observed, ref.ObservedAt)
	assert.NotEmpty(t, ref.Name)
}

func TestRequestsThatEnqueueNothing(t *testing.T) {
	cases := []struct {
		name   string
		path   string
		body   func(testing.TB) []byte
		status int
		result string
	}{
		{"no token", "/webhook", sample, http.StatusUnauthorized, ResultUnauthorized},
		{"wrong token", "/webhook/" + strings.Repeat("0", len(token)), sample, http.StatusUnauthorized, ResultUnauthorized},
		{"token prefix only", "/webhook/" + token[:10], sample, http.StatusUnauthorized, ResultUnauthorized},
		{"another reason", "/webhook/" + token, func(t testing.TB) []byte {
			return withEvent(t, func(obj map[string]any) { obj["reason"] = "Scheduled" })
		}, http.StatusOK, ResultIgnored},
		{"regarding a Node", "/webhook/" + token, func(t testing.TB) []byte {
			return withEvent(t, func(obj map[string]any) { obj["regarding"].(map[string]any)["kind"] = "Node" })
		}, http.StatusOK, ResultIgnored},
		{"regarding no namespace", "/webhook/" + token, func(t testing.TB) []byte {
			return withEvent(t, func(obj map[string]any) { delete(obj["regarding"].(map[string]any), "namespace") })
		}, http.StatusOK, ResultIgnored},
		{"dry run", "/webhook/" + token, func(t testing.TB) []byte {
			return []byte(strings.Replace(string(sample(t)), `"dryRun": false`, `"dryRun": true`, 1))
		}, http.StatusOK, ResultIgnored},
		{"malformed body", "/webhook/" + token, func(testing.TB) []byte { return []byte(`{"kind":"AdmissionReview"`) }, http.StatusBadRequest, ResultMalformed},
		{"too large", "/webhook/" + token, func(testing.TB) []byte { return make([]byte, MaxBodyBytes+1) }, http.StatusRequestEntityTooLarge, ResultTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, client, url := newIntake(t)
			res := in.Handle(context.Background(), tc.path, tc.body(t))
			assert.Equal(t, tc.status, res.Status, string(res.Body))
			assert.Equal(t, tc.result, res.Result)
			assert.Empty(t, receiveAll(t, client, url))
			assert.NotContains(t, string(res.Body), "json:", "internal error text never reaches the caller")
		})
	}
}

func TestQueueFailureStillAllows(t *testing.T) {
	in, _, _ := newIntake(t)
	in.QueueURL = in.QueueURL + "-missing"
	var logged strings.Builder
	in.Log = slog.New(slog.NewJSONHandler(&logged, nil))
	res := in.Handle(context.Background(), "/webhook/"+token, sample(t))
	assert.Equal(t, http.StatusOK, res.Status)
	assert.Contains(t, string(res.Body), `"allowed":true`)
	assert.Equal(t, ResultEnqueueFailed, res.Result)
	assert.Contains(t, logged.String(), "enqueue failed")
}

// BenchmarkHandle measures one webhook request end to end against moto — the token checked against the
// Secrets Manager source (cached, as in a warm function), the pod enqueued on SQS — and reports the
// latency percentiles (target: p99 ≤ 50 ms, far inside AnswerBudget).
func BenchmarkHandle(b *testing.B) {
	in, _, _ := newIntake(b)
	body := sample(b)
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if res := in.Handle(context.Background(), "/webhook/"+token, body); res.Status != http.StatusOK {
			b.Fatalf("status %d", res.Status)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}

// BenchmarkEnqueue measures the SQS call alone — the part AnswerBudget bounds — against moto, each
// iteration a new pod (no FIFO deduplication shortcut).
func BenchmarkEnqueue(b *testing.B) {
	in, _, _ := newIntake(b)
	review, err := kube.DecodeEventReview(bytes.NewReader(sample(b)), MaxBodyBytes)
	require.NoError(b, err)
	pod := review.Regarding
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		pod.UID = types.UID(fmt.Sprintf("bench-%d", i))
		start := time.Now()
		if _, err := in.enqueue(context.Background(), pod); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
