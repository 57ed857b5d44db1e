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
