package podwebhook

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/webhooktoken"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// blackHole is a TCP endpoint that accepts connections and never answers: an AWS API that hangs.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// TestHangingQueueStillAnswersInsideTheAPIServerTimeout points the real SQS client at an endpoint that
// never answers: the intake gives up when its AnswerBudget is spent (the SDK's retries inside it) and
// allows the Event before the API server's timeout, so the API server never fails open and never logs the
// URL.
func TestHangingQueueStillAnswersInsideTheAPIServerTimeout(t *testing.T) {
	var logs bytes.Buffer
	moto := awstest.Shared(t) // before the intake: every Shared call resets moto
	in, _, _, _ := newIntakeWithSecret(t, slog.New(slog.NewJSONHandler(&logs, nil)))
	cfg := moto.Config()
	cfg.BaseEndpoint = aws.String(blackHole(t))
	deadlines := &deadlineQueue{Queue: sqs.NewFromConfig(cfg)}
	in.Queue = deadlines
	// The token is read once, as by the first request of a warm function.
	require.True(t, in.Tokens.Valid(context.Background(), token))

	start := time.Now()
	res := in.Handle(context.Background(), "/webhook/"+token, sample(t))
	took := time.Since(start)
	assert.Equal(t, http.StatusOK, res.Status)
	assert.Contains(t, string(res.Body), `"allowed":true`)
	assert.GreaterOrEqual(t, took, AnswerBudget, "the intake waited for the queue up to its bound")
	require.False(t, deadlines.deadline.IsZero(), "the SQS call has a deadline")
	assert.LessOrEqual(t, deadlines.deadline.Sub(deadlines.calledAt), AnswerBudget, "the SQS call ends within the answer budget")
	assert.Less(t, AnswerBudget, time.Duration(footprint.WebhookTimeoutSeconds)*time.Second, "inside the API server's timeout")
	assert.Contains(t, logs.String(), "enqueue failed")
	assert.NotContains(t, logs.String(), token)
}

// deadlineQueue records the deadline of the context its SendMessage is called with.
type deadlineQueue struct {
	Queue
	deadline, calledAt time.Time
}

func (q *deadlineQueue) SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.calledAt = time.Now()
	q.deadline, _ = ctx.Deadline()
	return q.Queue.SendMessage(ctx, in, optFns...)
}

// TestNoLogLineCarriesAToken runs the intake through every path that logs — valid and wrong tokens, a
// rotation with its overlap, malformed bodies, a missing and a hanging queue, an unreadable secret — and
// checks every line the intake and the token source wrote.
func TestNoLogLineCarriesAToken(t *testing.T) {
	const rotated = "r0t4t3d9c2d7e61b04a8fa5d2c1e0b7a94f62ee"
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	moto := awstest.Shared(t) // before the intake: every Shared call resets moto
	in, _, _, arn := newIntakeWithSecret(t, log)
	secrets := secretsmanager.NewFromConfig(moto.Config())
	now := time.Now()
	tokens, err := webhooktoken.New(secrets, webhooktoken.Options{SecretID: arn, Log: log, Now: func() time.Time { return now }})
	require.NoError(t, err)
	in.Tokens = tokens
	ctx := context.Background()
	call := func(tok string, body []byte) int { return in.Handle(ctx, "/webhook/"+tok, body).Status }

	assert.Equal(t, http.StatusOK, call(token, sample(t)))
	assert.Equal(t, http.StatusUnauthorized, call(rotated, sample(t)), "not yet rotated")
	assert.Equal(t, http.StatusUnauthorized, call(token[:len(token)-1], sample(t)), "a near miss")
	assert.Equal(t, http.StatusBadRequest, call(token, []byte(`{"kind":"AdmissionReview"`)))

	_, err = secrets.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(arn), SecretString: aws.String(rotated)})
	require.NoError(t, err)
	now = now.Add(webhooktoken.DefaultRefreshInterval)
	assert.Equal(t, http.StatusOK, call(rotated, sample(t)), "the rotated token, without a restart")
	assert.Equal(t, http.StatusOK, call(token, sample(t)), "the previous token inside the overlap")

	queueURL := in.QueueURL
	in.QueueURL += "-missing"
	// Pods the intake has not sent yet: it does not send a pod again within the deduplication window.
	assert.Equal(t, http.StatusOK, call(rotated, eventFor(t, "uid-missing-queue")))
	in.QueueURL = queueURL
	cfg := moto.Config()
	cfg.BaseEndpoint = aws.String(blackHole(t))
	in.Queue = sqs.NewFromConfig(cfg)
	assert.Equal(t, http.StatusOK, call(rotated, eventFor(t, "uid-hanging-queue")))

	_, err = secrets.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(arn), ForceDeleteWithoutRecovery: aws.Bool(true)})
	require.NoError(t, err)
	now = now.Add(webhooktoken.DefaultOverlap + webhooktoken.DefaultTTL)
	assert.Equal(t, http.StatusOK, call(rotated, sample(t)), "a secret that cannot be read keeps the tokens held")
	assert.Equal(t, http.StatusUnauthorized, call(token, sample(t)), "the overlap is over")

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	for _, want := range []string{"refused a webhook request", "rejected admission review", "webhook token rotated",
		"enqueue failed", "reading the webhook token failed"} {
		assert.Contains(t, logs.String(), want, "the path that logs %q ran", want)
	}
	for _, line := range lines {
		for _, tok := range []string{token, rotated, token[:len(token)-1]} {
			assert.NotContains(t, line, tok)
		}
	}
	t.Logf("%d log lines checked", len(lines))
}
