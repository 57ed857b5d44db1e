package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// claims is a unit-test store: every claim is missing except those whose read fails.
type claims struct {
	mu      sync.Mutex
	failing map[string]error
	read    []string
}

func (c *claims) GetClaim(_ context.Context, name string) (state.Claim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read = append(c.read, name)
	if err := c.failing[name]; err != nil {
		return state.Claim{}, err
	}
	return state.Claim{}, state.ErrNotFound
}

func (c *claims) UpdateClaim(context.Context, string, func(*state.Claim) error) (state.Claim, error) {
	return state.Claim{}, errors.New("not in this test")
}

func (c *claims) GetConfig(context.Context, string, string) (state.ConfigItem, error) {
	return state.ConfigItem{}, state.ErrNotFound
}

func (c *claims) RecordDecision(context.Context, state.Decision) error { return nil }

func (c *claims) ReleaseDisruption(context.Context, string, string) error { return nil }

func (c *claims) Mark(context.Context, string) (time.Time, error) { return time.Time{}, nil }

func (c *claims) ClaimReplacements(context.Context, string) ([]state.Claim, error) {
	return nil, errors.New("not in this test")
}

func invoke(t *testing.T, store *claims, sample string) (events.SQSEventResponse, string) {
	t.Helper()
	payload, err := os.ReadFile("../../events/" + sample)
	require.NoError(t, err)
	var logs bytes.Buffer
	s := termination.NewService(termination.Config{QueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/termination",
		Log: slog.New(slog.NewJSONHandler(&logs, nil))}, termination.Deps{Store: store, Now: time.Now})
	reports := 0
	out, err := lambda.NewHandler(handler(s, func(termination.BatchStats) { reports++ })).Invoke(context.Background(), payload)
	require.NoError(t, err, "the invocation never fails")
	assert.Equal(t, 1, reports, "every invocation reports what its batch did")
	var res events.SQSEventResponse
	require.NoError(t, json.Unmarshal(out, &res))
	return res, logs.String()
}

func TestRequestsReachTheServiceAndOnlyTransientFailuresAreRetried(t *testing.T) {
	store := &claims{failing: map[string]error{"spot-q4w9z": errors.New("ProvisionedThroughputExceededException")}}
	res, logs := invoke(t, store, "termination-request.json")
	assert.ElementsMatch(t, []string{"default-x7k2m", "spot-q4w9z"}, store.read)
	assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "7d1f3c2a-9b8e-4f6d-a5c4-000000000001"}}, res.BatchItemFailures,
		"the claim that could not be read is delivered again; the missing one is acknowledged")
	assert.Contains(t, logs, "nothing to terminate")
	assert.Contains(t, logs, "ProvisionedThroughputExceededException")
}

func TestSampleRequestsParse(t *testing.T) {
	payload, err := os.ReadFile("../../events/termination-request.json")
	require.NoError(t, err)
	var ev events.SQSEvent
	require.NoError(t, json.Unmarshal(payload, &ev))
	require.Len(t, ev.Records, 2)
	spot, err := termination.ParseRequest(ev.Records[1].Body)
	require.NoError(t, err)
	require.NotNil(t, spot.Deadline)
	assert.Equal(t, time.Date(2026, 11, 22, 12, 2, 0, 0, time.UTC), *spot.Deadline)
	assert.Equal(t, 4, spot.Attempt)
	assert.Equal(t, "2026-11-22T12:00:41Z", *ev.Records[1].MessageAttributes[termination.DrainedAtAttribute].StringValue)
}

func TestMalformedRequestsAreLoggedOnceAndAcknowledged(t *testing.T) {
	store := &claims{}
	res, logs := invoke(t, store, "termination-request-malformed.json")
	assert.Empty(t, res.BatchItemFailures, "retrying a malformed message cannot help")
	assert.Empty(t, store.read, "nothing is looked up")
	assert.Equal(t, 3, strings.Count(logs, "malformed termination request dropped"), "one line per message")
	// A field this version does not know is not malformed (see termination.ParseRequest); a wrong type is.
	for _, reason := range []string{"invalid character", "reason is required", "Request.attempt of type int"} {
		assert.Contains(t, logs, reason)
	}
}
