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

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
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

// spotCounter is the spot refresh; it counts its calls and fails with err, or panics with panics.
type spotCounter struct {
	calls  int
	err    error
	panics string
}

func (s *spotCounter) refresh(context.Context) error {
	s.calls++
	if s.panics != "" {
		panic(s.panics)
	}
	return s.err
}

// onDemandCounter is the on-demand refresh; it counts its calls, records its deadline and answers res, err.
type onDemandCounter struct {
	calls    int
	deadline time.Time
	res      pricing.OnDemandRefresh
	err      error
}

func (o *onDemandCounter) Refresh(ctx context.Context) (pricing.OnDemandRefresh, error) {
	o.calls++
	o.deadline, _ = ctx.Deadline()
	return o.res, o.err
}

func invoke(t *testing.T, r settler, spot *spotCounter) string {
	t.Helper()
	return invokeWith(t, "lifecycle-schedule.json", r, spot)
}

func invokeWith(t *testing.T, sample string, r settler, spot *spotCounter) string {
	t.Helper()
	return invokeAll(t, sample, r, spot, &onDemandCounter{res: pricing.OnDemandRefresh{Skipped: "the prices held are younger than 12h",
		Source: "AWS Pricing API for us-east-1 observed 2026-11-22T12:00:00Z", Types: 1367}})
}

func invokeAll(t *testing.T, sample string, r settler, spot *spotCounter, onDemand *onDemandCounter) string {
	t.Helper()
	payload, err := os.ReadFile("../../events/" + sample)
	require.NoError(t, err)
	var logs bytes.Buffer
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	out, err := lambda.NewHandler(handler(r, priceRefresh{spot: spot.refresh, onDemand: onDemand}, nil, slog.New(slog.NewJSONHandler(&logs, nil)))).Invoke(ctx, payload)
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

// TestAPanickingPriceRefreshIsLoggedAndThePassesGoOn: the refreshes run on goroutines beside the passes,
// which hold the lifecycle lease; a panic there must be the refresh's logged error, not the end of the
// process with the lease held and Nodes left unregistered.
func TestAPanickingPriceRefreshIsLoggedAndThePassesGoOn(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1, Registered: 1}}
	var logs string
	require.NotPanics(t, func() { logs = invoke(t, r, &spotCounter{panics: "spot table: nil map"}) })
	assert.Equal(t, []string{"req-1"}, r.runs, "the passes ran")
	assert.Contains(t, logs, `"registered":1`)
	assert.Contains(t, logs, `"spotRefreshError":"panic: spot table: nil map`)
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

func TestTheReportReachesTheSink(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1, Usage: []lifecycle.PoolUsage{{NodePool: "default", Nodes: 2}}}}
	var got []lifecycle.PoolUsage
	h := handler(r, priceRefresh{spot: (&spotCounter{}).refresh, onDemand: &onDemandCounter{}},
		func(rep lifecycle.RunReport) { got = rep.Usage }, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	require.NoError(t, h(context.Background(), events.EventBridgeEvent{DetailType: "Scheduled Event"}))
	require.Len(t, got, 1)
	assert.Equal(t, "default", got[0].NodePool)

	called := false
	r = &fakeSettler{rep: lifecycle.RunReport{Lease: false}}
	h = handler(r, priceRefresh{spot: (&spotCounter{}).refresh, onDemand: &onDemandCounter{}},
		func(lifecycle.RunReport) { called = true }, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	require.NoError(t, h(context.Background(), events.EventBridgeEvent{DetailType: "Scheduled Event"}))
	assert.False(t, called, "a run that did not hold the lease found nothing to report")
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

func TestOnDemandRefreshRunsBesideThePassesAndIsLogged(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1}}
	od := &onDemandCounter{res: pricing.OnDemandRefresh{Refreshed: true, Source: "AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z", Types: 790}}
	logs := invokeAll(t, "lifecycle-schedule.json", r, &spotCounter{}, od)
	assert.Equal(t, 1, od.calls)
	assert.False(t, od.deadline.IsZero(), "the refresh runs under a deadline")
	assert.WithinDuration(t, time.Now().Add(onDemandRefreshTimeout), od.deadline, 5*time.Second)
	for _, want := range []string{`"onDemandPrices":"AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z"`, `"onDemandTypes":790`, `"onDemandRefreshed":true`} {
		assert.Contains(t, logs, want)
	}
	assert.NotContains(t, logs, "onDemandRefreshError")
}

func TestFailedOnDemandRefreshIsLoggedAndNeverBlocksTheRun(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 2, Registered: 1}}
	od := &onDemandCounter{res: pricing.OnDemandRefresh{Skipped: "the Pricing API read failed", Source: "static table for eu-west-1 generated 2025-04-24T13:17:44Z", Types: 772},
		err: errors.New("refreshing on-demand prices for eu-west-1 (keeping static table): AccessDeniedException: not authorized")}
	logs := invokeAll(t, "lifecycle-schedule.json", r, &spotCounter{}, od)
	assert.Equal(t, []string{"req-1"}, r.runs, "the passes ran")
	assert.Contains(t, logs, `"msg":"lifecycle run"`)
	assert.Contains(t, logs, `"registered":1`)
	assert.Contains(t, logs, `"onDemandRefreshError":"refreshing on-demand prices for eu-west-1 (keeping static table): AccessDeniedException: not authorized"`)
	assert.Contains(t, logs, `"onDemandPrices":"static table for eu-west-1 generated 2025-04-24T13:17:44Z"`)
}

func TestOnDemandRefreshLeavesTheInvocationItsMargin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	rctx, rcancel := onDemandRefreshContext(ctx)
	defer rcancel()
	d, ok := rctx.Deadline()
	require.True(t, ok)
	parent, _ := ctx.Deadline()
	assert.Equal(t, parent.Add(-onDemandRefreshMargin), d, "a short invocation ends the refresh 5 s before its own deadline")

	rctx, rcancel = onDemandRefreshContext(context.Background())
	defer rcancel()
	d, ok = rctx.Deadline()
	require.True(t, ok)
	assert.WithinDuration(t, time.Now().Add(onDemandRefreshTimeout), d, time.Second)
}

func TestNodeRepairsAreLoggedAndReachTheSink(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1, Repairs: []lifecycle.Repair{{NodePool: "default", Node: "ip-a",
		Claim: "default-a", Condition: "ready"}}, RepairBlocked: []string{"gpu"}}}
	var got lifecycle.RunReport
	var logs bytes.Buffer
	h := handler(r, priceRefresh{spot: (&spotCounter{}).refresh, onDemand: &onDemandCounter{}}, func(rep lifecycle.RunReport) { got = rep },
		slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, h(context.Background(), events.EventBridgeEvent{DetailType: "Scheduled Event"}))
	assert.Equal(t, r.rep.Repairs, got.Repairs)
	assert.Contains(t, logs.String(), `"repairs":1`)
	assert.Contains(t, logs.String(), `"repairBlocked":["gpu"]`)
}

func TestMirrorDeletionRequestsAreLogged(t *testing.T) {
	r := &fakeSettler{rep: lifecycle.RunReport{Lease: true, Passes: 1, DeletionsRequested: []string{"default-a"}}}
	var logs bytes.Buffer
	h := handler(r, priceRefresh{spot: (&spotCounter{}).refresh, onDemand: &onDemandCounter{}}, nil, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, h(context.Background(), events.EventBridgeEvent{DetailType: "Scheduled Event"}))
	assert.Contains(t, logs.String(), `"mirrorDeletionsRequested":["default-a"]`)
}
