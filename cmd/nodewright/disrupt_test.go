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

// claimAt creates a claim and walks it forward to lifecycle l, with its Node named node (from registered on).
func claimAt(t *testing.T, store *state.Store, c state.Claim, l state.Lifecycle, node string) {
	t.Helper()
	ctx := context.Background()
	_, err := store.CreateClaim(ctx, c)
	require.NoError(t, err)
	path := map[state.Lifecycle][]state.Lifecycle{
		state.Pending:     nil,
		state.Launched:    {state.Launched},
		state.Registered:  {state.Launched, state.Registered},
		state.Initialized: {state.Launched, state.Registered, state.Initialized},
		state.Draining:    {state.Launched, state.Registered, state.Initialized, state.Draining},
		state.Terminating: {state.Launched, state.Terminating},
		state.Deleted:     {state.Launched, state.Registered, state.Deleted},
	}[l]
	for _, next := range path {
		_, err := store.UpdateClaim(ctx, c.Name, func(c *state.Claim) error {
			c.Lifecycle = next
			if next == state.Registered {
				c.NodeName = node
			}
			return nil
		})
		require.NoError(t, err)
	}
}

func runDisruptCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := dispatch(append([]string{"disrupt"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// fixDisruptClock pins the request's clock and caller for a test.
func fixDisruptClock(t *testing.T, at time.Time, by string) {
	t.Helper()
	disruptNow, disruptBy = func() time.Time { return at }, func() string { return by }
	t.Cleanup(func() { disruptNow, disruptBy = time.Now, callerName })
}

func TestDisruptRequestsByNodeAndIsIdempotent(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "disrupt-request")
	grace := time.Hour
	claimAt(t, store, state.Claim{Name: "default-old", NodePool: "default"}, state.Deleted, "ip-10-0-0-1")
	claimAt(t, store, state.Claim{Name: "default-reg", NodePool: "default", TerminationGracePeriod: &grace}, state.Initialized, "ip-10-0-0-1")
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	fixDisruptClock(t, t0, "alice")

	code, out, stderr := runDisruptCmd("node/ip-10-0-0-1", "--table", "disrupt-request", "--reason", "kernel CVE")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "nodeclaim/default-reg (node ip-10-0-0-1): disruption requested at 2025-06-01T12:00:00Z by alice: kernel CVE.",
		"the node resolves to its live claim, not the deleted one that had the same name")
	assert.Contains(t, out, "launches replacement capacity for the node's pods")
	assert.Contains(t, out, "within its terminationGracePeriod (1h0m0s)")
	assert.Contains(t, out, "do not hold the request back")
	assert.Contains(t, out, "Follow it with: nodewright explain node/ip-10-0-0-1")
	c, err := store.GetClaim(ctx, "default-reg")
	require.NoError(t, err)
	require.NotNil(t, c.DisruptionRequest)
	assert.Equal(t, state.DisruptionRequest{Reason: "kernel CVE", RequestedAt: t0, By: "alice"}, *c.DisruptionRequest)
	old, err := store.GetClaim(ctx, "default-old")
	require.NoError(t, err)
	assert.Nil(t, old.DisruptionRequest)

	fixDisruptClock(t, t0.Add(time.Hour), "bob")
	code, out, stderr = runDisruptCmd("--table", "disrupt-request", "nodeclaim/default-reg", "--reason", "again", "-o", "json")
	require.Equal(t, 0, code, stderr)
	var res disruptResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, disruptAlreadyRequested, res.Outcome)
	require.NotNil(t, res.DisruptionRequest)
	assert.Equal(t, t0, res.DisruptionRequest.RequestedAt, "the first request stands")
	again, err := store.GetClaim(ctx, "default-reg")
	require.NoError(t, err)
	assert.Equal(t, c.Version, again.Version, "nothing written")
	assert.Equal(t, *c.DisruptionRequest, *again.DisruptionRequest)

	code, out, stderr = runDisruptCmd("nodeclaim/default-reg", "--table", "disrupt-request")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "disruption already requested at 2025-06-01T12:00:00Z by alice: kernel CVE; nothing written, the first request stands.")
}

func TestDisruptAClaimWithoutANodeYet(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "disrupt-pending")
	claimAt(t, store, state.Claim{Name: "default-new", NodePool: "default"}, state.Launched, "")
	fixDisruptClock(t, time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), "")

	code, out, stderr := runDisruptCmd("nodeclaim/default-new", "--table", "disrupt-pending")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "nodeclaim/default-new: disruption requested at 2025-06-01T12:00:00Z.")
	assert.Contains(t, out, "Its node is not registered yet (lifecycle launched)")
	assert.Contains(t, out, "no terminationGracePeriod")
	assert.Contains(t, out, "Follow it with: nodewright explain nodeclaim/default-new")
	c, err := store.GetClaim(ctx, "default-new")
	require.NoError(t, err)
	require.NotNil(t, c.DisruptionRequest)
	assert.Empty(t, c.DisruptionRequest.By, "no identity known: none recorded")
}

func TestDisruptRefusesWhatItDoesNotOwnOrIsGone(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "disrupt-refuse")
	claimAt(t, store, state.Claim{Name: "default-gone", NodePool: "default"}, state.Deleted, "ip-10-0-0-3")
	claimAt(t, store, state.Claim{Name: "default-drain", NodePool: "default"}, state.Draining, "ip-10-0-0-2")
	_, err := store.UpdateClaim(ctx, "default-drain", func(c *state.Claim) error { c.DisruptionReason = "Drifted"; return nil })
	require.NoError(t, err)
	claimAt(t, store, state.Claim{Name: "default-term", NodePool: "default"}, state.Terminating, "")

	for _, tc := range []struct{ target, want string }{
		{"nodeclaim/nope", "nodeclaim nope: no such NodeClaim in the state table"},
		{"nodeclaim/default-gone", "nodeclaim default-gone was deleted at "},
		{"node/ip-10-0-0-3", "node ip-10-0-0-3: no live NodeClaim"},
		{"node/ip-10-9-9-9", "node ip-10-9-9-9: no live NodeClaim in this Nodewright's state table has it as its Node; Nodewright disrupts only the nodes it launched"},
	} {
		code, out, stderr := runDisruptCmd(tc.target, "--table", "disrupt-refuse")
		assert.Equal(t, 1, code, tc.target)
		assert.Empty(t, out, tc.target)
		assert.Contains(t, stderr, tc.want, tc.target)
	}

	before, err := store.GetClaim(ctx, "default-drain")
	require.NoError(t, err)
	code, out, stderr := runDisruptCmd("node/ip-10-0-0-2", "--table", "disrupt-refuse")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `^nodeclaim/default-drain \(node ip-10-0-0-2\) is already being removed \(draining since \S+Z, Drifted\); nothing written\.`, out)
	after, err := store.GetClaim(ctx, "default-drain")
	require.NoError(t, err)
	assert.Equal(t, before.Version, after.Version, "nothing written")
	assert.Nil(t, after.DisruptionRequest)

	code, out, stderr = runDisruptCmd("nodeclaim/default-term", "--table", "disrupt-refuse", "-o", "json")
	require.Equal(t, 0, code, stderr)
	var res disruptResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, disruptAlreadyRemoving, res.Outcome)
	assert.Equal(t, state.Terminating, res.Lifecycle)
}

func TestDisruptUsageErrors(t *testing.T) {
	t.Setenv("NODEWRIGHT_STATE_TABLE", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--table", "t"}, "name the NodeClaim or Node to disrupt"},
		{[]string{"node/a", "node/b", "--table", "t"}, "one NodeClaim or Node at a time, got 2: node/a node/b"},
		{[]string{"pod/shop/web", "--table", "t"}, `"pod/shop/web": want nodeclaim/NAME or node/NAME`},
		{[]string{"default-abc", "--table", "t"}, `"default-abc": want nodeclaim/NAME or node/NAME`},
		{[]string{"nodeclaim/", "--table", "t"}, `"nodeclaim/": a nodeclaim is named nodeclaim/NAME`},
		{[]string{"node/a/b", "--table", "t"}, `"node/a/b": a node is named node/NAME`},
		{[]string{"node/a"}, "the state table is required"},
		{[]string{"node/a", "--table", "t", "-o", "yaml"}, `output format "yaml"`},
		{[]string{"node/a", "--table", "t", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		code, out, stderr := runDisruptCmd(tc.args...)
		assert.Equal(t, 2, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.Contains(t, stderr, "Usage: nodewright disrupt nodeclaim/NAME|node/NAME", tc.args)
	}
	code, _, stderr := runDisruptCmd("-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "--reason")
}
