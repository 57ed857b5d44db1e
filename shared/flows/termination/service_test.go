package termination

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// claimStore is a unit-test Store holding claims in memory; err fails every read.
type claimStore struct {
	claims map[string]state.Claim
	// pools are stored NodePools by name.
	pools map[string]state.ConfigItem
	err   error
	mark  time.Time
}

func (f *claimStore) GetClaim(_ context.Context, name string) (state.Claim, error) {
	if f.err != nil {
		return state.Claim{}, f.err
	}
	c, ok := f.claims[name]
	if !ok {
		return state.Claim{}, state.ErrNotFound
	}
	return c, nil
}

func (f *claimStore) UpdateClaim(context.Context, string, func(*state.Claim) error) (state.Claim, error) {
	return state.Claim{}, errors.New("unit tests write no claim")
}

func (f *claimStore) GetConfig(_ context.Context, kind, name string) (state.ConfigItem, error) {
	if item, ok := f.pools[name]; ok && kind == state.KindNodePool {
		return item, nil
	}
	return state.ConfigItem{}, state.ErrNotFound
}

func (f *claimStore) RecordDecision(context.Context, state.Decision) error { return nil }

func (f *claimStore) ReleaseDisruption(context.Context, string, string) error { return nil }

func (f *claimStore) Mark(context.Context, string) (time.Time, error) { return f.mark, f.err }

func (f *claimStore) ClaimReplacements(_ context.Context, replaced string) ([]state.Claim, error) {
	var out []state.Claim
	for _, c := range f.claims {
		if slices.Contains(c.Replaces, replaced) {
			out = append(out, c)
		}
	}
	return out, f.err
}

func batch(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: string(rune('a' + i)), Body: b})
	}
	return ev
}

func TestHandleBatchWithoutTouchingTheCluster(t *testing.T) {
	const valid = `{"claim":"default-abc","reason":"Drifted","requestedAt":"2026-11-22T12:00:00Z","attempt":3}`
	cases := []struct {
		name       string
		store      *claimStore
		body       string
		wantFailed bool
		wantLog    string
	}{
		{"malformed JSON is dropped with its reason", &claimStore{}, `{"claim":`, false, "unexpected EOF"},
		{"a missing field is named", &claimStore{}, `{"claim":"x","requestedAt":"2026-11-22T12:00:00Z"}`, false, "reason is required"},
		{"a wrong type is named", &claimStore{}, `{"claim":"x","reason":"Drifted","requestedAt":"2026-11-22T12:00:00Z","attempt":"3"}`, false,
			`Request.attempt of type int`},
		{"a missing claim is acknowledged", &claimStore{}, valid, false, "nothing to terminate"},
		{"a deleted claim is acknowledged", &claimStore{claims: map[string]state.Claim{"default-abc": {Name: "default-abc", Lifecycle: state.Deleted}}},
			valid, false, "nothing to terminate"},
		{"a re-drive for a claim back in service is acknowledged", &claimStore{claims: map[string]state.Claim{
			"default-abc": {Name: "default-abc", Lifecycle: state.Initialized, NodeName: "n"}}}, valid, false, "called off"},
		{"a state failure is retried by SQS", &claimStore{err: errors.New("ProvisionedThroughputExceeded")}, valid, true, "ProvisionedThroughputExceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := NewService(Config{QueueURL: "http://queue", Log: slog.New(slog.NewJSONHandler(&logs, nil))}, Deps{Store: tc.store})
			resp := s.HandleBatch(context.Background(), batch(tc.body))
			if tc.wantFailed {
				assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "a"}}, resp.BatchItemFailures)
			} else {
				assert.Empty(t, resp.BatchItemFailures)
			}
			assert.Contains(t, logs.String(), tc.wantLog)
			assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("\n")), "logged once")
		})
	}
}

// sentMessages is a unit-test Queue that keeps what is sent; err fails every send.
type sentMessages struct {
	sent []*sqs.SendMessageInput
	err  error
}

func (q *sentMessages) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if q.err != nil {
		return nil, q.err
	}
	q.sent = append(q.sent, in)
	return &sqs.SendMessageOutput{}, nil
}

func TestAFailingRequestNeverReachesTheDeadLetterQueue(t *testing.T) {
	const body = `{"claim":"default-abc","reason":"Drifted","requestedAt":"2026-11-22T12:00:00Z","attempt":3}`
	cases := []struct {
		name      string
		received  string
		sendErr   error
		wantAcked bool
		wantSent  bool
	}{
		{"the first receives are left to SQS", "1", nil, false, false},
		{"still left to SQS just below the threshold", strconv.Itoa(FreshCopyAfterReceives - 1), nil, false, false},
		{"from the threshold on a fresh copy is sent", strconv.Itoa(FreshCopyAfterReceives), nil, true, true},
		{"long before maxReceiveCount", "19", nil, true, true},
		{"a copy that cannot be sent leaves the message to SQS", "19", errors.New("sqs unavailable"), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := &sentMessages{err: tc.sendErr}
			s := NewService(Config{QueueURL: "http://queue", BlockedDelay: 40 * time.Second, Log: slog.New(slog.DiscardHandler)},
				Deps{Store: &claimStore{err: errors.New("ProvisionedThroughputExceeded")}, Queue: q})
			ev := batch(body)
			ev.Records[0].Attributes = map[string]string{"ApproximateReceiveCount": tc.received}
			resp, stats := s.Handle(context.Background(), ev)
			if tc.wantAcked {
				assert.Empty(t, resp.BatchItemFailures)
				assert.Equal(t, 1, stats.Redriven)
			} else {
				assert.Len(t, resp.BatchItemFailures, 1)
			}
			if !tc.wantSent {
				assert.Empty(t, q.sent)
				return
			}
			require.Len(t, q.sent, 1)
			assert.Equal(t, int32(40), q.sent[0].DelaySeconds, "looked at again after the blocked delay")
			req, err := ParseRequest(aws.ToString(q.sent[0].MessageBody))
			require.NoError(t, err)
			assert.Equal(t, 3, req.Attempt, "the attempt is kept: the step did not run")
			assert.Equal(t, "default-abc", req.Claim)
		})
	}
}

// visibilityLog records the visibility changes asked for.
type visibilityLog struct {
	queue   string
	entries map[string]int32
}

func (v *visibilityLog) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput,
	_ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	v.queue = aws.ToString(in.QueueUrl)
	for _, e := range in.Entries {
		v.entries[aws.ToString(e.ReceiptHandle)] = e.VisibilityTimeout
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

// TestFailedAndUnstartedRequestsComeBackInSeconds: a request whose step failed, and those the invocation
// had no time left to start, are batch failures made visible again in seconds, not after the queue's
// visibility timeout.
func TestFailedAndUnstartedRequestsComeBackInSeconds(t *testing.T) {
	const body = `{"claim":"default-abc","reason":"Drifted","requestedAt":"2026-11-22T12:00:00Z","attempt":3}`
	vis := &visibilityLog{entries: map[string]int32{}}
	s := NewService(Config{QueueURL: "http://queue", Log: slog.New(slog.DiscardHandler), Retry: sqsbatch.Policy{Reserve: 3 * time.Second}},
		Deps{Store: &claimStore{err: errors.New("ProvisionedThroughputExceeded")}, Queue: &sentMessages{}, Visibility: vis})
	ev := batch(body, body)
	ev.Records[0].ReceiptHandle, ev.Records[1].ReceiptHandle = "rh-a", "rh-b"
	ev.Records[1].Attributes = map[string]string{"ApproximateReceiveCount": "2"}
	resp, _ := s.Handle(context.Background(), ev)
	assert.Len(t, resp.BatchItemFailures, 2)
	assert.Equal(t, "http://queue", vis.queue)
	assert.Equal(t, map[string]int32{"rh-a": 2, "rh-b": 4}, vis.entries)

	vis.entries = map[string]int32{}
	store := &claimStore{}
	s = NewService(Config{QueueURL: "http://queue", Log: slog.New(slog.DiscardHandler), Retry: sqsbatch.Policy{Reserve: 3 * time.Second}},
		Deps{Store: store, Queue: &sentMessages{}, Visibility: vis})
	soon, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, _ = s.Handle(soon, ev)
	assert.Len(t, resp.BatchItemFailures, 2, "inside the reserve nothing starts; both are left to SQS")
	assert.Len(t, vis.entries, 2, "and come back in seconds")
}

// panickingStore is a claimStore whose reads panic for one claim, as a bug in a step would.
type panickingStore struct {
	*claimStore
	claim string
}

func (p panickingStore) GetClaim(ctx context.Context, name string) (state.Claim, error) {
	if name == p.claim {
		panic("step: index out of range")
	}
	return p.claimStore.GetClaim(ctx, name)
}

// TestAPanickingRequestFailsAloneAndTheBatchGoesOn: each request runs on its own goroutine; a panic there
// would end the invocation and hold every drain of the batch for the queue's visibility timeout. It must
// fail only its own message (retried as any failed step) and leave the others handled.
func TestAPanickingRequestFailsAloneAndTheBatchGoesOn(t *testing.T) {
	bad := `{"claim":"bad","reason":"Drifted","requestedAt":"2026-11-22T12:00:00Z","attempt":1}`
	gone := `{"claim":"gone","reason":"Drifted","requestedAt":"2026-11-22T12:00:00Z","attempt":1}`
	var logs bytes.Buffer
	s := NewService(Config{QueueURL: "http://queue", Log: slog.New(slog.NewJSONHandler(&logs, nil))},
		Deps{Store: panickingStore{claimStore: &claimStore{}, claim: "bad"}, Queue: &sentMessages{}})
	var resp events.SQSEventResponse
	require.NotPanics(t, func() { resp, _ = s.Handle(context.Background(), batch(bad, gone)) })
	assert.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "a"}}, resp.BatchItemFailures,
		"the panicking request is retried; the other one, whose claim is gone, is done")
	assert.Contains(t, logs.String(), "step: index out of range")
}
