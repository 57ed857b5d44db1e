package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// fakeRunner fakes the runs; its batch response is the real provisioner's (without a visibility client).
type fakeRunner struct {
	*provisioning.Provisioner
	runs                   []string
	triggers               []provisioning.Trigger
	rep                    provisioning.Report
	err                    error
	coalesced, unsatisfied bool
}

func (f *fakeRunner) Handle(_ context.Context, runID string, t provisioning.Trigger) provisioning.Outcome {
	f.triggers = append(f.triggers, t)
	if f.coalesced {
		return provisioning.Outcome{Trigger: t, Coalesced: true}
	}
	f.runs = append(f.runs, runID)
	return provisioning.Outcome{Trigger: t, Report: f.rep, Launched: f.rep.Claims, Err: f.err, Runs: 1, Unsatisfied: f.unsatisfied}
}

func TestAnUnsatisfiedBatchIsHandedBack(t *testing.T) {
	payload, err := os.ReadFile("../../events/provisioner-sqs-batch.json")
	require.NoError(t, err)
	r := &fakeRunner{Provisioner: provisioning.New(provisioning.Config{}, provisioning.Dependencies{}), unsatisfied: true,
		rep: provisioning.Report{Lease: true}}
	res, logs := invoke(t, r, payload)
	assert.Len(t, res.BatchItemFailures, 3, "the whole FIFO batch comes back")
	assert.Contains(t, logs, "saw every pod of the batch")
}

func invoke(t *testing.T, r runner, payload []byte) (events.SQSEventResponse, string) {
	t.Helper()
	var logs bytes.Buffer
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	out, err := lambda.NewHandler(handler(r, nil, slog.New(slog.NewJSONHandler(&logs, nil)))).Invoke(ctx, payload)
	require.NoError(t, err, "the handler never fails the invocation")
	var res events.SQSEventResponse
	require.NoError(t, json.Unmarshal(out, &res))
	return res, logs.String()
}

func TestQueueBatchCoalescesIntoOneRun(t *testing.T) {
	payload, err := os.ReadFile("../../events/provisioner-sqs-batch.json")
	require.NoError(t, err)
	r := &fakeRunner{rep: provisioning.Report{Lease: true, PendingPods: 3, Claims: []provisioning.LaunchedClaim{{Name: "default-abcde"}},
		MirrorsWritten: 1}}
	res, logs := invoke(t, r, payload)
	assert.Equal(t, []string{"req-1"}, r.runs, "three messages, one run, under the request id")
	assert.Empty(t, res.BatchItemFailures)
	assert.Contains(t, logs, `"trigger":"queue"`)
	assert.Contains(t, logs, `"messages":3`)
	assert.Contains(t, logs, `"launched":1`)
	assert.Contains(t, logs, `"mirrorsWritten":1`)
}

func TestScheduleBackstopRuns(t *testing.T) {
	payload, err := os.ReadFile("../../events/provisioner-schedule-backstop.json")
	require.NoError(t, err)
	r := &fakeRunner{rep: provisioning.Report{Lease: false}}
	res, logs := invoke(t, r, payload)
	assert.Len(t, r.runs, 1)
	assert.Empty(t, res.BatchItemFailures)
	assert.Contains(t, logs, `"trigger":"schedule"`)
	assert.Contains(t, logs, "coalesced")
}

func TestFailedRunIsLoggedAndAcknowledged(t *testing.T) {
	payload, err := os.ReadFile("../../events/provisioner-sqs-batch.json")
	require.NoError(t, err)
	r := &fakeRunner{err: errors.New("snapshot incomplete: 410 Gone")}
	res, logs := invoke(t, r, payload)
	assert.Empty(t, res.BatchItemFailures, "pods stay pending; the next run finds them, so nothing is retried from here")
	assert.Contains(t, logs, "snapshot incomplete")
}

func TestStaleBatchIsAcknowledgedWithoutARun(t *testing.T) {
	payload, err := os.ReadFile("../../events/provisioner-sqs-batch.json")
	require.NoError(t, err)
	r := &fakeRunner{coalesced: true}
	res, logs := invoke(t, r, payload)
	assert.Empty(t, r.runs)
	require.Len(t, r.triggers, 1)
	assert.Equal(t, 3, r.triggers[0].Messages)
	assert.False(t, r.triggers[0].NewestSent.IsZero(), "the sample's SentTimestamp reaches the use case")
	assert.Empty(t, res.BatchItemFailures)
	assert.Contains(t, logs, `"coalesced":true`)
}
