package state

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// throttler answers the first n requests with DynamoDB's throttling error and passes the rest to moto.
type throttler struct {
	n     int32
	calls atomic.Int32
	next  http.RoundTripper
}

func (th *throttler) RoundTrip(r *http.Request) (*http.Response, error) {
	if th.calls.Add(1) <= th.n {
		return &http.Response{
			StatusCode: http.StatusBadRequest,
			Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
			Body: io.NopCloser(strings.NewReader(
				`{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}`)),
			Request: r,
		}, nil
	}
	return th.next.RoundTrip(r)
}

func TestThrottlingIsRetried(t *testing.T) {
	ctx := context.Background()
	moto := awstest.Shared(t)
	_, err := NewClient(moto.Config()).CreateTable(ctx, CreateTableInput("state"))
	require.NoError(t, err)

	th := &throttler{n: 2, next: http.DefaultTransport}
	db := NewClient(moto.Config(), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: th} })
	s := New(db, "state")
	_, err = s.CreateClaim(ctx, Claim{Name: "c1", NodePool: "default"})
	require.NoError(t, err, "two throttled attempts are retried")
	assert.EqualValues(t, 3, th.calls.Load())

	_, err = New(dynamodb.NewFromConfig(moto.Config(), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: &throttler{n: 100, next: http.DefaultTransport}}
		o.RetryMaxAttempts = 1
	}), "state").GetClaim(ctx, "c1")
	require.Error(t, err, "without retries the throttling error surfaces")
	assert.Contains(t, err.Error(), "ThrottlingException")
}

func TestAReleaseRidesOutThrottlingWithinItsBudget(t *testing.T) {
	ctx := context.Background()
	moto := awstest.Shared(t)
	_, err := NewClient(moto.Config()).CreateTable(ctx, CreateTableInput("state"))
	require.NoError(t, err)
	lease, err := New(NewClient(moto.Config()), "state").AcquireLease(ctx, "provisioner", "run-1", time.Minute)
	require.NoError(t, err)

	// Six throttled attempts in a row: at the client's usual backoff (up to 5 s a pause) they take about
	// 13 s on average, past the budget; a release's pauses are capped at a second.
	th := &throttler{n: 6, next: http.DefaultTransport}
	cfg := moto.Config()
	cfg.RetryMaxAttempts = 0 // as in Lambda: the store client's own retryer decides (8 attempts)
	s := New(NewClient(cfg, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: th} }), "state")
	rctx, cancel := context.WithTimeout(ctx, LeaseReleaseBudget)
	defer cancel()
	require.NoError(t, s.ReleaseLease(rctx, lease))
	assert.EqualValues(t, 7, th.calls.Load())

	_, err = New(NewClient(moto.Config()), "state").AcquireLease(ctx, "provisioner", "run-2", time.Minute)
	assert.NoError(t, err, "released: another holder takes the lease at once")
}
