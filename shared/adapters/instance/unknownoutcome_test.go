package instance

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lostAnswer is an HTTP client in front of moto that lets the first CreateFleet call through and then
// answers it with a 500, as EC2 does when it fails after starting the fleet: the instances exist, the
// caller hears an internal error.
type lostAnswer struct {
	inner     aws.HTTPClient
	fleets    atomic.Int32
	remaining atomic.Int32
}

func (c *lostAnswer) Do(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := c.inner.Do(req)
	if err != nil || !bytes.Contains(body, []byte("Action=CreateFleet")) {
		return resp, err
	}
	c.fleets.Add(1)
	if c.remaining.Add(-1) < 0 {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return &http.Response{StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error", Proto: "HTTP/1.1",
		ProtoMajor: 1, ProtoMinor: 1, Request: req, Header: http.Header{"Content-Type": {"text/xml;charset=UTF-8"}},
		Body: io.NopCloser(bytes.NewReader([]byte(errorXML("InternalError", "An internal error has occurred."))))}, nil
}

// lossyClient is an EC2 client on moto whose first n CreateFleet answers are lost as 500s. The SDK does
// not retry here: moto ignores ClientToken, so a retry would launch again where EC2 would return the
// first fleet, and the test is about what the launcher does once the SDK gave up.
func lossyClient(net network, n int32) (*ec2.Client, *lostAnswer) {
	lost := &lostAnswer{inner: http.DefaultClient}
	lost.remaining.Store(n)
	return ec2.New(net.client.Options(), func(o *ec2.Options) { o.HTTPClient, o.RetryMaxAttempts = lost, 1 }), lost
}

// TestALaunchWhoseAnswerWasLostAdoptsTheInstance: CreateFleet started the instance and answered 500; the
// launcher finds it by its claim tag instead of reporting "nothing launched" (which released the claim
// and launched again on the next run).
func TestALaunchWhoseAnswerWasLostAdoptsTheInstance(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	client, lost := lossyClient(n, 1)
	const cluster = "lost-answer"
	l := New(client, cluster)
	req := n.request("default-lost1")
	req.Cluster = cluster

	inst, err := l.Launch(ctx, req)
	require.NoError(t, err)
	assert.EqualValues(t, 1, lost.fleets.Load(), "the instance was found: no second fleet")
	all, err := New(n.client, cluster).List(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1, "one instance for the claim")
	assert.Equal(t, all[0].ID, inst.ID)
	assert.Equal(t, "default-lost1", inst.Tags[TagNodeClaim])
}

// TestABatchWhoseAnswerWasLostAdoptsItsInstances: the same for a batch, by its batch tag; every claim gets
// one of the instances the lost call started and each is tagged with its claim.
func TestABatchWhoseAnswerWasLostAdoptsItsInstances(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	client, lost := lossyClient(n, 1)
	const cluster = "lost-batch"
	l := New(client, cluster)
	req := BatchRequest{Request: fresh(n.request("")), Batch: "batch-lost00000001", Claims: batchClaims(4)}
	req.Cluster = cluster

	res, err := l.LaunchBatch(ctx, req)
	require.NoError(t, err)
	assert.True(t, res.Adopted)
	assert.NoError(t, res.Partial)
	assert.Empty(t, res.Unassigned)
	require.Len(t, res.Assigned, 4)
	assert.EqualValues(t, 1, lost.fleets.Load(), "no second fleet")
	all, err := New(n.client, cluster).List(ctx)
	require.NoError(t, err)
	require.Len(t, all, 4, "four claims, four instances")
	claims := map[string]bool{}
	for _, inst := range all {
		claims[inst.Tags[TagNodeClaim]] = true
	}
	assert.Len(t, claims, 4, "each instance is tagged with its own claim")
}

// TestAFullSubnetIsAnUnknownOutcome: moto answers CreateFleet into a subnet without free addresses with a
// 500 and an HTML page (it fails picking an address). Nothing was started, but a 500 cannot say so: the
// look-up finds no instance, the same token is asked again, and the launch ends as an unknown outcome (the
// claim stays pending for reconciliation) rather than as a definite "nothing launched".
func TestAFullSubnetIsAnUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	client, lost := lossyClient(n, 0)
	const cluster = "full-subnet"
	l := New(client, cluster)
	// A /28 holds 11 addresses EC2 hands out; fill it.
	sub, err := n.client.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(n.vpc), AvailabilityZone: aws.String("us-east-1c"),
		CidrBlock: aws.String("10.1.9.0/28")})
	require.NoError(t, err)
	req := n.request("")
	req.Cluster = cluster
	req.Overrides = []Override{{InstanceType: "c5.large", Zone: "us-east-1c", SubnetID: aws.ToString(sub.Subnet.SubnetId), LaunchTemplate: "lt-default"}}
	filled := 0
	for i := 0; i < 20; i++ {
		req.Claim = fmt.Sprintf("default-fill%02d", i)
		if _, err = l.Launch(ctx, req); err != nil {
			break
		}
		filled++
	}
	require.Error(t, err, "the subnet filled up")
	require.Greater(t, filled, 0)
	assert.False(t, Answered(err), "a 500 is no proof that nothing started: %v", err)
	assert.EqualValues(t, filled+2, lost.fleets.Load(), "the failed launch asked twice, with the same token")
	_, found, ferr := l.FindByClaim(ctx, req.Claim)
	require.NoError(t, ferr)
	assert.False(t, found)
}
