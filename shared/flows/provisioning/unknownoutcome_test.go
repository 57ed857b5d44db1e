package provisioning

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// failingEC2 is an EC2 endpoint whose CreateFleet always answers 500 InternalError, as EC2 does when it
// fails on its side (perhaps after starting the fleet), and whose DescribeInstances lists nothing.
func failingEC2(t *testing.T) *ec2.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		rw.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		if r.Form.Get("Action") == "DescribeInstances" {
			_, _ = rw.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId><reservationSet/></DescribeInstancesResponse>`))
			return
		}
		rw.WriteHeader(http.StatusInternalServerError)
		_, _ = rw.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>InternalError</Code><Message>An internal error has occurred.</Message></Error></Errors><RequestID>r-2</RequestID></Response>`))
	}))
	t.Cleanup(srv.Close)
	return ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""), RetryMaxAttempts: 1})
}

// TestRunKeepsABatchPendingWhenCreateFleetAnswers500: a 500 from CreateFleet leaves open whether EC2
// started the batch's instances, so its claims stay pending (in flight, for reconciliation to adopt by
// the batch tag) instead of being deleted and launched again while their instances may be booting.
func TestRunKeepsABatchPendingWhenCreateFleetAnswers500(t *testing.T) {
	ctx := context.Background()
	w, _ := batchWorld(t, 4)
	w.p.deps.Launcher = instance.New(failingEC2(t), "demo")
	w.p.cfg.Cluster.Name = "demo"
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	require.Len(t, rep.LaunchFailures, 4)
	for _, f := range rep.LaunchFailures {
		assert.Equal(t, "LaunchOutcomeUnknown", f.Reason)
		assert.True(t, f.Pending)
	}
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, claims, 4)
	for _, c := range claims {
		assert.Equal(t, state.Pending, c.Lifecycle, "claim %s", c.Name)
		assert.NotEmpty(t, c.Batch)
	}
}

// TestRunKeepsAClaimPendingWhenCreateFleetAnswers500 is the same for a claim launched alone.
func TestRunKeepsAClaimPendingWhenCreateFleetAnswers500(t *testing.T) {
	ctx := context.Background()
	s := newStateStore(t)
	_, err := testLaunch(s, instance.New(failingEC2(t), "demo")).run(ctx)
	var failure *LaunchFailure
	require.ErrorAs(t, err, &failure)
	assert.Equal(t, "LaunchOutcomeUnknown", failure.Reason)
	c, err := s.GetClaim(ctx, "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, state.Pending, c.Lifecycle)
}
