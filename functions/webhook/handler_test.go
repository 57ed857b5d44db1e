package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/provisioningqueue"
	"github.com/nodewright/nodewright/shared/adapters/webhooktoken"
	"github.com/nodewright/nodewright/shared/flows/podwebhook"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// recordingQueue keeps what the handler enqueues.
type recordingQueue struct{ sent []*sqs.SendMessageInput }

func (q *recordingQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.sent = append(q.sent, in)
	return &sqs.SendMessageOutput{MessageId: aws.String("m-1")}, nil
}

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

// tokensFromMoto is the token source main wires, reading a secret created in moto's Secrets Manager.
func tokensFromMoto(t *testing.T) podwebhook.Tokens {
	t.Helper()
	secrets := secretsmanager.NewFromConfig(awstest.Shared(t).Config())
	out, err := secrets.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: aws.String("webhook-token"),
		SecretString: aws.String("3f9c2d7e61b04a8fa5d2c1e0b7a94f62")})
	require.NoError(t, err)
	tokens, err := webhooktoken.New(secrets, webhooktoken.Options{SecretID: aws.ToString(out.ARN)})
	require.NoError(t, err)
	return tokens
}

func invoke(t *testing.T, tokens podwebhook.Tokens, q *recordingQueue, payload []byte) events.LambdaFunctionURLResponse {
	t.Helper()
	res, _ := invokeWithResult(t, tokens, q, payload)
	return res
}

// invokeWithResult invokes the handler and returns what it reported for the metrics too.
func invokeWithResult(t *testing.T, tokens podwebhook.Tokens, q *recordingQueue, payload []byte) (events.LambdaFunctionURLResponse, string) {
	t.Helper()
	intake := &podwebhook.Intake{Cluster: "demo", QueueURL: "https://sqs/provisioning.fifo", Tokens: tokens,
		Queue: q, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	var results []string
	out, err := lambda.NewHandler(handler(intake, func(result string, took time.Duration) {
		results = append(results, result)
		assert.Positive(t, took)
	})).Invoke(context.Background(), payload)
	require.NoError(t, err, "the handler never fails the invocation")
	var res events.LambdaFunctionURLResponse
	require.NoError(t, json.Unmarshal(out, &res))
	require.Len(t, results, 1, "one result per request")
	return res, results[0]
}

func TestFunctionURLSample(t *testing.T) {
	payload, err := os.ReadFile("../../events/functionurl-admission-failedscheduling.json")
	require.NoError(t, err)
	q := &recordingQueue{}
	tokens := tokensFromMoto(t)
	res, result := invokeWithResult(t, tokens, q, payload)
	assert.Equal(t, 200, res.StatusCode)
	assert.Equal(t, podwebhook.ResultEnqueued, result)
	assert.Equal(t, "application/json", res.Headers["Content-Type"])
	assert.Contains(t, res.Body, `"allowed":true`)
	require.Len(t, q.sent, 1)
	assert.Equal(t, provisioningqueue.PodGroup("demo", "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f"), aws.ToString(q.sent[0].MessageGroupId))

	// The same request with a base64 body, as a Function URL delivers non-text content types.
	var req events.LambdaFunctionURLRequest
	require.NoError(t, json.Unmarshal(payload, &req))
	req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(req.Body)), true
	b64, err := json.Marshal(req)
	require.NoError(t, err)
	assert.Equal(t, 200, invoke(t, tokens, q, b64).StatusCode)

	req.RawPath = "/webhook/guess"
	bad, err := json.Marshal(req)
	require.NoError(t, err)
	res, result = invokeWithResult(t, tokens, q, bad)
	assert.Equal(t, 401, res.StatusCode)
	assert.Equal(t, podwebhook.ResultUnauthorized, result)
	assert.Len(t, q.sent, 2, "an unauthorized request enqueues nothing")

	req.Body, req.RawPath = "%%%", "/webhook/3f9c2d7e61b04a8fa5d2c1e0b7a94f62"
	garbled, err := json.Marshal(req)
	require.NoError(t, err)
	res, result = invokeWithResult(t, tokens, q, garbled)
	assert.Equal(t, 400, res.StatusCode)
	assert.Equal(t, podwebhook.ResultMalformed, result, "a body that is not base64 is counted as malformed")
}
