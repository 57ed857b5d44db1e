package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

type fakeRunner struct {
	runs  int
	rep   disruptionrun.Report
	err   error
	panic bool
}

func (f *fakeRunner) Run(context.Context, string) (disruptionrun.Report, error) {
	f.runs++
	if f.panic {
		panic("boom")
	}
	return f.rep, f.err
}

func invoke(t *testing.T, r runner, payload string) (events.SQSEventResponse, []disruptionrun.Report, string) {
	t.Helper()
	var logs bytes.Buffer
	var seen []disruptionrun.Report
	h := handler(r, func(rep disruptionrun.Report) { seen = append(seen, rep) }, slog.New(slog.NewJSONHandler(&logs, nil)))
	resp, err := h(context.Background(), json.RawMessage(payload))
	require.NoError(t, err, "the invocation never fails")
	return resp, seen, logs.String()
}

const schedule = `{"version":"0","id":"e1","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`

func batch(bodies ...string) string {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: string(rune('a' + i)), Body: b, EventSource: "aws:sqs"})
	}
	out, _ := json.Marshal(ev)
	return string(out)
}

const wake = `{"cluster":"demo","claim":"default-abcde","reason":"Empty","observedAt":"2026-06-01T12:00:00Z"}`

func TestScheduleRunsOnce(t *testing.T) {
	r := &fakeRunner{rep: disruptionrun.Report{Lease: true}}
	resp, seen, logs := invoke(t, r, schedule)
	assert.Equal(t, 1, r.runs)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Len(t, seen, 1, "metrics for a run that held the lease")
	assert.Contains(t, logs, `"trigger":"schedule"`)
}

func TestWakeBatchRunsOnceAndDropsMalformedMessages(t *testing.T) {
	r := &fakeRunner{rep: disruptionrun.Report{Lease: true}}
	resp, _, logs := invoke(t, r, batch(wake, "not json", wake))
	assert.Equal(t, 1, r.runs, "one run for the whole batch")
	assert.Empty(t, resp.BatchItemFailures)
	assert.Equal(t, 1, strings.Count(logs, "malformed disruption wake-up dropped"))
	assert.Contains(t, logs, `"trigger":"queue"`)
}

func TestFailedRunRedeliversWellFormedMessagesOnly(t *testing.T) {
	r := &fakeRunner{err: errors.New("state table unavailable")}
	resp, seen, logs := invoke(t, r, batch(wake, "{{", wake))
	assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "a"}, {ItemIdentifier: "c"}}, resp.BatchItemFailures)
	assert.Empty(t, seen, "no metrics for a failed run")
	assert.Contains(t, logs, "state table unavailable")
}

func TestLeaseHeldIsNotAFailure(t *testing.T) {
	r := &fakeRunner{rep: disruptionrun.Report{Lease: false}}
	resp, seen, logs := invoke(t, r, batch(wake))
	assert.Empty(t, resp.BatchItemFailures)
	assert.Empty(t, seen)
	assert.Contains(t, logs, "another run holds the disruption lease")
}

func TestHandlerNeverPanics(t *testing.T) {
	r := &fakeRunner{panic: true}
	resp, _, logs := invoke(t, r, schedule)
	assert.Empty(t, resp.BatchItemFailures)
	assert.Contains(t, logs, "panicked")
}

// The samples in events/ as Lambda delivers them, through the Lambda runtime's own handler wrapper.
func TestSamples(t *testing.T) {
	for _, tc := range []struct {
		file     string
		failures int
		trigger  string
	}{{"disruption-schedule.json", 0, "schedule"}, {"disruption-sqs-wake.json", 1, "queue"}} {
		t.Run(tc.file, func(t *testing.T) {
			payload, err := os.ReadFile("../../events/" + tc.file)
			require.NoError(t, err)
			r := &fakeRunner{rep: disruptionrun.Report{Lease: true}, err: nil}
			if tc.failures > 0 {
				r.err = errors.New("state table unavailable")
			}
			var logs bytes.Buffer
			ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
			out, err := lambda.NewHandler(handler(r, nil, slog.New(slog.NewJSONHandler(&logs, nil)))).Invoke(ctx, payload)
			require.NoError(t, err)
			var resp events.SQSEventResponse
			require.NoError(t, json.Unmarshal(out, &resp))
			assert.Len(t, resp.BatchItemFailures, tc.failures, "only the well-formed wake-up is redelivered")
			assert.Equal(t, 1, r.runs)
			assert.Contains(t, logs.String(), `"trigger":"`+tc.trigger+`"`)
		})
	}
}
