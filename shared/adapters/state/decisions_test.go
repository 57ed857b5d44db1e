package state

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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

func TestRecordDecisionsInBatches(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	var ds []Decision
	for i := 0; i < 60; i++ { // three BatchWriteItem calls: 25, 25, 10
		ds = append(ds, Decision{Subject: fmt.Sprintf("pod/default/web-%d", i%20), ID: fmt.Sprintf("run-%d", i/20),
			Kind: "CannotProvision", Reason: "FailedScheduling", Message: "no NodePool allows 64 CPU"})
	}
	ds = append(ds, Decision{Subject: "pod/default/huge", ID: "run-0", Kind: "CannotProvision", Reason: "FailedScheduling",
		Message: strings.Repeat("m", 100*1024)})
	require.NoError(t, s.RecordDecisions(ctx, ds))
	got, err := s.Decisions(ctx, "pod/default/web-7", 10)
	require.NoError(t, err)
	assert.Len(t, got, 3, "each of the three runs recorded the pod")
	huge, err := s.Decisions(ctx, "pod/default/huge", 1)
	require.NoError(t, err)
	require.Len(t, huge, 1)
	assert.True(t, huge[0].Truncated, "cut to fit, as a single record is")

	err = s.RecordDecisions(ctx, []Decision{{Subject: "pod/default/a", ID: "r", Kind: "K"}, {Subject: "pod/default/b"}})
	assert.ErrorIs(t, err, ErrInvalid)
	none, err := s.Decisions(ctx, "pod/default/a", 1)
	require.NoError(t, err)
	assert.Empty(t, none, "an invalid decision fails the call before anything is written")
	assert.NoError(t, s.RecordDecisions(ctx, nil))
}

// batchCounter counts BatchWriteItem calls and the most in flight at once.
type batchCounter struct {
	DynamoDB
	mu                    sync.Mutex
	calls, flying, maxFly int
}

func (b *batchCounter) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	b.mu.Lock()
	b.calls++
	b.flying++
	b.maxFly = max(b.maxFly, b.flying)
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.flying--; b.mu.Unlock() }()
	return b.DynamoDB.BatchWriteItem(ctx, in, optFns...)
}

func TestRecordDecisionsWritesConcurrentlyWithinItsBudget(t *testing.T) {
	s, _ := newStore(t)
	counter := &batchCounter{DynamoDB: s.db}
	s.db = counter
	var ds []Decision
	for i := 0; i < 200; i++ { // eight calls of 25
		ds = append(ds, Decision{Subject: fmt.Sprintf("pod/default/web-%d", i), ID: "run-1", Kind: "CannotProvision", Reason: "FailedScheduling"})
	}
	require.NoError(t, s.RecordDecisions(context.Background(), ds))
	assert.Equal(t, 8, counter.calls)
	assert.LessOrEqual(t, counter.maxFly, decisionWriters, "never more calls in flight than decisionWriters")
	got, err := s.Decisions(context.Background(), "pod/default/web-199", 1)
	require.NoError(t, err)
	assert.Len(t, got, 1)

	spent, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.RecordDecisions(spent, ds)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "200 of 200 decisions not recorded", "a spent budget sends nothing and says how much was lost")
	assert.Equal(t, 8, counter.calls)
}
