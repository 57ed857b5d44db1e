package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestStatusListsClaimsPerNodePool(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "status-state")
	created := time.Now().Add(-90 * time.Minute)
	for _, c := range []state.Claim{
		{Name: "default-a1", NodePool: "default", CreatedAt: created},
		{Name: "default-b2", NodePool: "default", CreatedAt: created},
		{Name: "gpu-c3", NodePool: "gpu", CreatedAt: created},
		{Name: "default-d4", NodePool: "default", CreatedAt: created},
	} {
		_, err := store.CreateClaim(ctx, c)
		require.NoError(t, err)
	}
	launch := func(name, typ, capacity string, price float64, l state.Lifecycle, reason string) {
		_, err := store.UpdateClaim(ctx, name, func(c *state.Claim) error {
			c.InstanceType, c.Zone, c.CapacityType, c.PricePerHour, c.Lifecycle = typ, "us-east-1a", capacity, price, l
			c.NodeName, c.DisruptionReason = "ip-"+name, reason
			return nil
		})
		require.NoError(t, err)
	}
	launch("default-a1", "m5.large", "spot", 0.04, state.Launched, "")
	launch("default-b2", "c6a.8xlarge", "on-demand", 1.224, state.Launched, "")
	launch("gpu-c3", "g5.xlarge", "on-demand", 1.006, state.Launched, "")
	_, err := store.UpdateClaim(ctx, "default-d4", func(c *state.Claim) error { c.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)
	require.NoError(t, store.MarkUnavailable(ctx, state.Offering{InstanceType: "m5.large", Zone: "us-east-1b", CapacityType: "spot"},
		"InsufficientInstanceCapacity", 3*time.Minute))
	require.NoError(t, store.MarkSubnetUnavailable(ctx, "subnet-0full", "us-east-1a", "InsufficientFreeAddressesInSubnet", 3*time.Minute))

	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"status"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, stderr := run("--table", "status-state")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `default\s+2\s+2 launched\s+1\.2640`, out, "per NodePool: claims, lifecycles and $/h:\n%s", out)
	assert.Regexp(t, `gpu-c3\s+gpu\s+launched\s+g5\.xlarge\s+us-east-1a\s+on-demand\s+1\.0060\s+ip-gpu-c3\s+90m\s+-`, out)
	assert.NotContains(t, out, "default-d4", "deleted claims are left out")
	assert.Regexp(t, `m5\.large us-east-1b spot\s+InsufficientInstanceCapacity\s+(2m|3m|1[0-9]{2}s)`, out, "retried within its 3 minutes")
	assert.Regexp(t, `subnet-0full\s+us-east-1a\s+InsufficientFreeAddressesInSubnet\s+(2m|3m|1[0-9]{2}s)`, out, "the full subnet")

	code, out, stderr = run("--table", "status-state", "--all", "-o", "json")
	require.Equal(t, 0, code, stderr)
	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Len(t, rep.NodeClaims, 4, "--all keeps the deleted claim")
	require.Len(t, rep.NodePools, 2)
	assert.Equal(t, 2, rep.NodePools[0].Claims, "a deleted claim is not counted in its NodePool")
	assert.Len(t, rep.Unavailable, 1)
	assert.Len(t, rep.UnavailableSubnets, 1)

	code, _, _ = run()
	assert.Equal(t, 2, code, "the table is required")
	code, _, _ = run("--table", "status-state", "-o", "yaml")
	assert.Equal(t, 2, code)
}

func TestStatusShowsDriftExpiryAndRequests(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "status-drift")
	now := time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC)
	statusNow = func() time.Time { return now }
	t.Cleanup(func() { statusNow = time.Now })
	day := 24 * time.Hour
	amiDrift := &state.DriftCondition{Reason: "AMIDrift", Since: now.Add(-time.Hour),
		Details: map[string]string{"oldImageId": "ami-1", "newImageId": "ami-2"}}
	request := &state.DisruptionRequest{RequestedAt: now.Add(-time.Minute), By: "alice"}
	for _, c := range []state.Claim{
		{Name: "default-drift", NodePool: "default", Lifecycle: state.Initialized, CreatedAt: now.Add(-2 * day), ExpireAfter: "720h0m0s",
			Drifted: amiDrift, DisruptionRequest: request},
		{Name: "default-old", NodePool: "default", Lifecycle: state.Initialized, CreatedAt: now.Add(-31 * day), ExpireAfter: "720h0m0s"},
		{Name: "default-soon", NodePool: "default", Lifecycle: state.Initialized, CreatedAt: now.Add(-30*day + 12*time.Hour), ExpireAfter: "720h0m0s"},
		{Name: "default-drain", NodePool: "default", Lifecycle: state.Draining, CreatedAt: now.Add(-day), DisruptionReason: "Drifted",
			Drifted: amiDrift, DisruptionRequest: request},
		{Name: "gpu-never", NodePool: "gpu", Lifecycle: state.Initialized, CreatedAt: now.Add(-day), ExpireAfter: state.ExpireNever},
		{Name: "gpu-unknown", NodePool: "gpu", Lifecycle: state.Initialized, CreatedAt: now.Add(-day)},
	} {
		_, err := store.CreateClaim(ctx, c)
		require.NoError(t, err)
	}

	var out, errOut bytes.Buffer
	require.Equal(t, 0, dispatch([]string{"status", "--table", "status-drift"}, strings.NewReader(""), &out, &errOut), errOut.String())
	text := out.String()
	assert.Contains(t, text, "NODEPOOL  NODECLAIMS  LIFECYCLES")
	assert.Regexp(t, `(?m)^NODEPOOL .*\$/H\s+DRIFTED\s+EXPIRED\s+EXPIRING<24H\s+REQUESTED$`, text)
	assert.Regexp(t, `(?m)^default\s+4\s+3 initialized, 1 draining\s+0\.0000\s+2\s+1\s+1\s+1$`, text,
		"2 drifted, 1 expired, 1 expiring within 24h, 1 request pending (the draining claim's is acted on):\n%s", text)
	assert.Regexp(t, `(?m)^gpu\s+2\s+2 initialized\s+0\.0000\s+0\s+0\s+0\s+0$`, text)
	assert.Regexp(t, `(?m)^NAME .*\s+AGE\s+DISRUPTION\s+DRIFTED\s+EXPIRES$`, text)
	assert.Regexp(t, `(?m)^default-drift\s.*\s2d\s+REQUESTED\s+AMIDrift\s+in 28d$`, text)
	assert.Regexp(t, `(?m)^default-drain\s.*\s24h\s+Drifted\s+AMIDrift\s+-$`, text, "a draining claim shows why, not the request")
	assert.Regexp(t, `(?m)^default-old\s.*\s31d\s+-\s+-\s+expired$`, text)
	assert.Regexp(t, `(?m)^default-soon\s.*\s+-\s+-\s+in 12h$`, text)
	assert.Regexp(t, `(?m)^gpu-never\s.*\s+-\s+-\s+Never$`, text)
	assert.Regexp(t, `(?m)^gpu-unknown\s.*\s24h\s+-\s+-\s+-$`, text)

	out.Reset()
	require.Equal(t, 0, dispatch([]string{"status", "--table", "status-drift", "-o", "json"}, strings.NewReader(""), &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), `"expiringWithin24h": 1`)
	var rep statusReport
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Len(t, rep.NodePools, 2)
	assert.Equal(t, poolStatus{Name: "default", Claims: 4, ByLifecycle: map[string]int{"initialized": 3, "draining": 1},
		Drifted: 2, Expired: 1, ExpiringSoon: 1, DisruptionRequested: 1}, rep.NodePools[0])
	byName := map[string]claimStatus{}
	for _, c := range rep.NodeClaims {
		byName[c.Name] = c
	}
	drifted := byName["default-drift"]
	require.NotNil(t, drifted.At)
	assert.Equal(t, now.Add(28*day), *drifted.At)
	require.NotNil(t, drifted.Drifted)
	assert.Equal(t, "ami-2", drifted.Drifted.Details["newImageId"])
	require.NotNil(t, drifted.DisruptionRequest)
	assert.Equal(t, "alice", drifted.DisruptionRequest.By)
	assert.True(t, byName["default-old"].Expired)
	assert.True(t, byName["gpu-never"].Never)
	assert.Nil(t, byName["gpu-unknown"].At)
}
