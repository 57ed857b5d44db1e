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

	"github.com/nodewright/nodewright/shared/state"
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

	code, out, stderr = run("--table", "status-state", "--all", "-o", "json")
	require.Equal(t, 0, code, stderr)
	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Len(t, rep.NodeClaims, 4, "--all keeps the deleted claim")
	require.Len(t, rep.NodePools, 2)
	assert.Equal(t, 2, rep.NodePools[0].Claims, "a deleted claim is not counted in its NodePool")
	assert.Len(t, rep.Unavailable, 1)

	code, _, _ = run()
	assert.Equal(t, 2, code, "the table is required")
	code, _, _ = run("--table", "status-state", "-o", "yaml")
	assert.Equal(t, 2, code)
}
