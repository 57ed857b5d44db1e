package main

import (
	"bytes"
	"context"
	"errors"
	"github.com/aws/aws-lambda-go/events"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/lifecycle"
)

type fakeSettler struct {
	runs  []string
	every []time.Duration
	rep   lifecycle.RunReport
	err   error
}

func (f *fakeSettler) RunUntilSettled(_ context.Context, runID string, every time.Duration) (lifecycle.RunReport, error) {
	f.runs, f.every = append(f.runs, runID), append(f.every, every)
	return f.rep, f.err
}

// spotCounter is the spot refresh; it counts its calls and fails with err.
type spotCounter struct {
	calls int
	err   error
}

func (s *spotCounter) refresh(context.Context) error {
	s.calls++
	return s.err
}

func invoke(t *testing.T, r settler, spot *spotCounter) string {
	t.Helper()
	return invokeWith(t, "lifecycle-schedule.json", r, spot)
}

func invokeWith(t *testing.T, sample string, r settler, spot *spotCounter) string {
	t.Helper()
	payload, err := os.ReadFile("../../events/" + sample)
	require.NoError(t, err)
	var logs bytes.Buffer
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	out, err := lambda.NewHandler(handler(r, spot.refresh, nil, slog.New(slog.NewJSONHandler(&logs, nil)))).Invoke(ctx, payload)
	require.NoError(t, err, "the handler never fails the invocation")
	assert.Equal(t, "null", string(out))
	return logs.String()
}

func TestScheduleSettlesEveryFiveSecondsAndRefreshesSpotOnce(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 3, Registered: 2, Initialized: 1, Joining: 1,
		Waiting: map[string]string{"default-abcde": "NodeNotReady"}}}
	spot := &spotCounter{}
	logs := invoke(t, r, spot)
	assert.Equal(t, []string{"req-1"}, r.runs, "one settle loop under the request id")
	assert.Equal(t, []time.Duration{5 * time.Second}, r.every)
	assert.Equal(t, 1, spot.calls, "spot prices refreshed once per invocation")
	for _, want := range []string{`"msg":"lifecycle run"`, `"trigger":"Scheduled Event"`, `"passes":3`, `"registered":2`,
		`"initialized":1`, `"joining":1`, `"waiting":{"default-abcde":"NodeNotReady"}`} {
		assert.Contains(t, logs, want)
	}
	assert.NotContains(t, logs, "spotRefreshError")
}

func TestFailuresAreLoggedNotReturned(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1, Registered: 1,
		Skipped: "repairs: the instance list could not be read; nothing is decided on partial data"},
		err: errors.New("listing the cluster's instances: Throttled (RequestLimitExceeded)")}
	spot := &spotCounter{err: errors.New("reading spot price history in us-east-1: throttled")}
	logs := invoke(t, r, spot)
	assert.Contains(t, logs, `"level":"ERROR"`)
	assert.Contains(t, logs, "RequestLimitExceeded")
	assert.Contains(t, logs, `"spotRefreshError":"reading spot price history in us-east-1: throttled"`)
	assert.Contains(t, logs, "nothing is decided on partial data")
}

func TestLeaseHeldElsewhereIsLogged(t *testing.T) {
	logs := invoke(t, &fakeSettler{}, &spotCounter{})
	assert.Contains(t, logs, "another invocation holds the lifecycle lease")
}

func TestInstanceRunningStartsASettleLoop(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 4, Registered: 1, Initialized: 1}}
	logs := invokeWith(t, "lifecycle-instance-running.json", r, &spotCounter{})
	assert.Equal(t, []string{"req-1"}, r.runs, "an instance entering running starts the same loop as the schedule")
	assert.Contains(t, logs, `"trigger":"EC2 Instance State-change Notification"`)
	assert.Contains(t, logs, `"registered":1`)
}

func TestUsageReachesTheSink(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1, Usage: []lifecycle.PoolUsage{{NodePool: "default", Nodes: 2}}}}
	var got []lifecycle.PoolUsage
	h := handler(r, (&spotCounter{}).refresh, func(u []lifecycle.PoolUsage) { got = u }, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	require.NoError(t, h(context.Background(), events.EventBridgeEvent{DetailType: "Scheduled Event"}))
	require.Len(t, got, 1)
	assert.Equal(t, "default", got[0].NodePool)
}

func TestHousekeepingIsLogged(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1,
		TemplatesDeleted: []string{"nodewright/prod/0123456789abcdef"}, ProfilesDeleted: []string{"nodewright_prod_ab"},
		Held: []string{"unused instance profiles: the configuration holds no EC2NodeClass"}}}
	logs := invoke(t, r, &spotCounter{})
	for _, want := range []string{`"launchTemplatesDeleted":["nodewright/prod/0123456789abcdef"]`,
		`"instanceProfilesDeleted":["nodewright_prod_ab"]`, `"held":["unused instance profiles: the configuration holds no EC2NodeClass"]`} {
		assert.Contains(t, logs, want)
	}
}
