package state

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPriceNoteMarksDecisionsThatRestOnPrices: with WithPriceNote, a launch (pricePerHour) and a
// disruption command (savingsPerHour) say what priced them, singly and in batches; a decision that does
// not rest on prices is left as it is, and so is the caller's map.
func TestPriceNoteMarksDecisionsThatRestOnPrices(t *testing.T) {
	ctx := context.Background()
	const note = "static table for eu-west-1 generated 2025-04-24T13:17:44Z; isolated VPC: the Pricing API is never called"
	s, _ := newStore(t, WithPriceNote(note))
	launch := map[string]string{"instanceType": "m5.large", "pricePerHour": "0.1070"}
	require.NoError(t, s.RecordDecision(ctx, Decision{Subject: "nodeclaim/default-abcde", ID: "default-abcde", Kind: "Launched",
		Reason: "Provisioned", Details: launch}))
	require.NoError(t, s.RecordDecisions(ctx, []Decision{
		{Subject: "node/ip-10-0-0-1", ID: "cmd-1-disrupt", Kind: "Disrupt", Reason: "Underutilized", Details: map[string]string{"savingsPerHour": "0.0500"}},
		{Subject: "pod/default/web-1", ID: "run-1", Kind: "CannotProvision", Reason: "FailedScheduling", Details: map[string]string{"nodePool": "default"}},
	}))
	assert.NotContains(t, launch, DetailPrices, "the caller's details are not changed")

	for subject, want := range map[string]string{"nodeclaim/default-abcde": note, "node/ip-10-0-0-1": note, "pod/default/web-1": ""} {
		got, err := s.Decisions(ctx, subject, 1)
		require.NoError(t, err)
		require.Len(t, got, 1, subject)
		assert.Equal(t, want, got[0].Details[DetailPrices], subject)
	}

	plain := New(s.db, s.table) // the same table, without a note
	require.NoError(t, plain.RecordDecision(ctx, Decision{Subject: "nodeclaim/other", ID: "other", Kind: "Launched", Reason: "Provisioned", Details: launch}))
	got, err := plain.Decisions(ctx, "nodeclaim/other", 1)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.NotContains(t, got[0].Details, DetailPrices, "without a note nothing is added")
}
