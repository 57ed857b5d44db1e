package state

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecisionsNewestFirstAndExpiring(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	for i := 0; i < 5; i++ {
		require.NoError(t, s.RecordDecision(ctx, Decision{Subject: "pod/default/web-1", ID: fmt.Sprint(i),
			Kind: "CannotProvision", Reason: "NoCompatibleInstanceTypes", Message: fmt.Sprintf("attempt %d", i)}))
		clk.Advance(time.Second)
	}
	got, err := s.Decisions(ctx, "pod/default/web-1", 3)
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"4", "3", "2"}, []string{got[0].ID, got[1].ID, got[2].ID})

	clk.Advance(DecisionRetention)
	got, err = s.Decisions(ctx, "pod/default/web-1", 10)
	require.NoError(t, err)
	assert.Empty(t, got, "records past their retention are not returned")
}

func TestOversizedDecisionIsTruncatedNotLost(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	details := map[string]string{}
	for i := 0; i < 60; i++ {
		details[fmt.Sprintf("pod-%d", i)] = strings.Repeat("z", 10*1024)
	}
	err := s.RecordDecision(ctx, Decision{Subject: "nodepool/default", ID: "big", Kind: "Launch", Reason: "Provisioned",
		Message: strings.Repeat("m", 100*1024), Details: details})
	require.NoError(t, err)
	got, err := s.Decisions(ctx, "nodepool/default", 1)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.True(t, got[0].Truncated)
	assert.Len(t, got[0].Message, maxDecisionText)
	assert.Less(t, len(got[0].Details), 60)

	assert.ErrorIs(t, s.RecordDecision(ctx, Decision{Subject: "x"}), ErrInvalid)
}
