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

func TestExplainShowsWhatTheFunctionsDecided(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "explain-state")
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, store.RecordDecisions(ctx, []state.Decision{
		{Subject: "pod/shop/checkout-0", ID: "run-1", Kind: "CannotProvision", Reason: "FailedScheduling", At: t0,
			Message: "nodepool default: limit cpu reached (16 of 16 used)"},
		{Subject: "pod/shop/checkout-0", ID: "run-2", Kind: "CannotProvision", Reason: "FailedScheduling", At: t0.Add(10 * time.Minute),
			Message: "nodepool default: pod requires kubernetes.io/arch In [arm64]"},
		{Subject: "nodeclaim/default-abc12", ID: "e-1", Kind: "MarkDisrupted", Reason: "SpotInterrupted", At: t0,
			Message: "claim default-abc12: draining", Details: map[string]string{"eventId": "e-1", "step": "MarkDisrupted"}},
	}))
	_, err := store.CreateClaim(ctx, state.Claim{Name: "default-abc12", NodePool: "default"})
	require.NoError(t, err)

	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"explain"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, out, stderr := run("pod/shop/checkout-0", "nodeclaim/default-abc12", "--table", "explain-state")
	require.Equal(t, 0, code, stderr)
	assert.Less(t, strings.Index(out, "arm64"), strings.Index(out, "limit cpu"), "newest first:\n%s", out)
	assert.Contains(t, out, "lifecycle pending  nodepool default")
	assert.Contains(t, out, "SpotInterrupted")
	assert.Contains(t, out, "eventId=e-1 step=MarkDisrupted")

	code, out, stderr = run("--table", "explain-state", "-o", "json", "--limit", "1", "pod/shop/checkout-0", "node/ip-10-0-0-1")
	require.Equal(t, 0, code, stderr)
	var got []explained
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, 2)
	require.Len(t, got[0].Decisions, 1, "--limit")
	assert.Contains(t, got[0].Decisions[0].Message, "arm64")
	assert.Empty(t, got[1].Decisions, "a subject without records is an empty list, not an error")
	assert.NotNil(t, got[1].Decisions)

	for _, bad := range []string{"checkout-0", "pod/checkout-0", "deployment/shop/web", "nodeclaim/", "node/a/b"} {
		code, _, stderr = run(bad, "--table", "explain-state")
		assert.Equal(t, 2, code, bad)
		assert.Contains(t, stderr, "subject "+`"`+bad+`"`, "the error names the argument")
	}
	code, _, _ = run("pod/shop/checkout-0")
	assert.Equal(t, 2, code, "the table is required")
}

func TestExplainShowsDriftExpiryAndDisruptionRequest(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "explain-drift")
	now := time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC)
	explainNow = func() time.Time { return now }
	t.Cleanup(func() { explainNow = time.Now })
	for _, c := range []state.Claim{
		{Name: "default-old", NodePool: "default", Lifecycle: state.Deleted, NodeName: "ip-10-0-0-7", CreatedAt: now.Add(-72 * time.Hour)},
		{Name: "default-x", NodePool: "default", Lifecycle: state.Initialized, NodeName: "ip-10-0-0-7", CreatedAt: now.Add(-48 * time.Hour),
			ExpireAfter: "720h0m0s",
			Drifted: &state.DriftCondition{Reason: "AMIDrift", Since: now.Add(-time.Hour),
				Details: map[string]string{"oldImageId": "ami-1", "newImageId": "ami-2", "requirement": "karpenter.sh/capacity-type"}},
			DisruptionRequest: &state.DisruptionRequest{Reason: "CVE", RequestedAt: now.Add(-time.Minute), By: "alice"}},
		{Name: "gpu-gone", NodePool: "gpu", Lifecycle: state.Deleted, NodeName: "ip-10-0-0-9", CreatedAt: now.Add(-40 * 24 * time.Hour),
			ExpireAfter: "720h0m0s"},
	} {
		_, err := store.CreateClaim(ctx, c)
		require.NoError(t, err)
	}
	run := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		require.Equal(t, 0, dispatch(append([]string{"explain", "--table", "explain-drift"}, args...), strings.NewReader(""), &out, &errOut), errOut.String())
		return out.String()
	}

	out := run("node/ip-10-0-0-7", "nodeclaim/default-x")
	node, claim, ok := strings.Cut(out, "\nnodeclaim/default-x\n")
	require.True(t, ok, out)
	assert.Contains(t, node, "  nodeclaim default-x\n  lifecycle initialized", "a node resolves to its live claim, named")
	assert.NotContains(t, claim, "  nodeclaim default-x\n", "a nodeclaim subject needs no name line")
	for _, part := range []string{node, claim} {
		assert.Contains(t, part, "  drifted: AMIDrift since 2025-06-09T23:00:00Z (imageId ami-1 → ami-2, requirement=karpenter.sh/capacity-type)\n")
		assert.Contains(t, part, "  expires at 2025-07-08T00:00:00Z (in 28d)\n")
		assert.Contains(t, part, "  disruption requested at 2025-06-09T23:59:00Z by alice: CVE (pending: ")
	}

	out = run("node/ip-10-0-0-9")
	assert.Contains(t, out, "  nodeclaim gpu-gone\n  lifecycle deleted", "a node only a deleted claim had shows that claim")
	assert.Contains(t, out, "  expired at 2025-05-31T00:00:00Z (10d ago)\n")
	assert.NotContains(t, out, "drifted:")
	assert.NotContains(t, out, "disruption requested")

	var got []explained
	require.NoError(t, json.Unmarshal([]byte(run("-o", "json", "node/ip-10-0-0-7")), &got))
	require.Len(t, got, 1)
	require.NotNil(t, got[0].Claim)
	assert.Equal(t, "default-x", got[0].Claim.Name)
	require.NotNil(t, got[0].Claim.Drifted)
	assert.Equal(t, "AMIDrift", got[0].Claim.Drifted.Reason)
	require.NotNil(t, got[0].Expiry)
	require.NotNil(t, got[0].Expiry.At)
	assert.Equal(t, now.Add(28*24*time.Hour), *got[0].Expiry.At)
}

func TestClaimExpiryTexts(t *testing.T) {
	now := time.Date(2025, 6, 10, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		expireAfter       string
		created           time.Time
		short, long       string
		expired, expiring bool
	}{
		{"Never", now, "Never", "never expires (expireAfter Never)", false, false},
		{"", now, "-", "expiry unknown (no expireAfter recorded on the claim)", false, false},
		{"bogus", now, "-", "expiry unknown (no expireAfter recorded on the claim)", false, false},
		{"1h", now.Add(-time.Hour), "expired", "expired at 2025-06-10T00:00:00Z (0s ago)", true, false},
		{"24h", now.Add(-time.Hour), "in 23h", "expires at 2025-06-10T23:00:00Z (in 23h)", false, true},
		{"720h", now, "in 30d", "expires at 2025-07-10T00:00:00Z (in 30d)", false, false},
	} {
		e := expiryOf(state.Claim{ExpireAfter: tc.expireAfter, CreatedAt: tc.created}, now)
		assert.Equal(t, tc.short, e.short(now), tc.expireAfter)
		assert.Equal(t, tc.long, e.long(now), tc.expireAfter)
		assert.Equal(t, tc.expired, e.Expired, tc.expireAfter)
		assert.Equal(t, tc.expiring, e.within(expiringSoon, now), tc.expireAfter)
	}
}

// TestExplainShowsTheSummaryForAPodPastTheCap: a pod past the provisioner's per-run cap has no record of
// its own; explain shows the latest summaries that count it.
func TestExplainShowsTheSummaryForAPodPastTheCap(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "explain-summary")
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, store.RecordDecisions(ctx, []state.Decision{
		{Subject: state.UnschedulableSubject, ID: "run-1-0", Kind: "CannotProvision", Reason: "FailedScheduling", At: t0,
			Message: "1,412 pods: nodepool default: limit cpu reached", Details: map[string]string{"pods": "1412", "sample": "shop/web-9 shop/web-8"}},
		{Subject: "pod/shop/web-9", ID: "run-1", Kind: "CannotProvision", Reason: "FailedScheduling", At: t0,
			Message: "nodepool default: limit cpu reached"},
	}))
	var out, errOut bytes.Buffer
	code := dispatch([]string{"explain", "pod/shop/web-1", "pod/shop/web-9", "--table", "explain-summary"}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	first, second, _ := strings.Cut(out.String(), "pod/shop/web-9")
	assert.Contains(t, first, "no decision recorded in the last 14 days")
	assert.Contains(t, first, "1,412 pods: nodepool default: limit cpu reached (pods=1412 sample=shop/web-9 shop/web-8)")
	assert.NotContains(t, second, "1,412 pods", "a pod with its own record needs no summary")
}
