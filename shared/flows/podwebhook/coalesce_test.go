package podwebhook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedQueue holds every SendMessage until released, and records every call.
type gatedQueue struct {
	release chan struct{}
	mu      sync.Mutex
	singles []string   // dedup ids sent alone
	batches [][]string // dedup ids per batch
	failIDs map[string]bool
}

func (q *gatedQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	q.singles = append(q.singles, aws.ToString(in.MessageDeduplicationId))
	q.mu.Unlock()
	<-q.release
	return &sqs.SendMessageOutput{}, nil
}

func (q *gatedQueue) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var ids []string
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		ids = append(ids, aws.ToString(e.MessageDeduplicationId))
		if q.failIDs[aws.ToString(e.MessageDeduplicationId)] {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError"), SenderFault: false})
		}
	}
	q.batches = append(q.batches, ids)
	return out, nil
}

func (q *gatedQueue) calls() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.singles) + len(q.batches)
}

// eventFor is the sample's Event about another pod.
func eventFor(t testing.TB, uid string) []byte {
	return withEvent(t, func(obj map[string]any) {
		r := obj["regarding"].(map[string]any)
		r["uid"], r["name"] = uid, "pod-"+uid
	})
}

// TestABurstOfEventsSharesSQSCalls: while maxInFlight enqueues are in flight, the pods of the requests
// that arrive wait and go out ten to a SendMessageBatch; every request is answered with its pod sent.
func TestABurstOfEventsSharesSQSCalls(t *testing.T) {
	q := &gatedQueue{release: make(chan struct{}), failIDs: map[string]bool{"uid-7": true}}
	in := &Intake{Cluster: "demo", QueueURL: "q", Tokens: fixedTokens{token}, Queue: q,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: func() time.Time { return observed }}

	var wg sync.WaitGroup
	answers := make([]int, 26)
	handle := func(i int) {
		defer wg.Done()
		answers[i] = in.Handle(context.Background(), "/webhook/"+token, eventFor(t, fmt.Sprint("uid-", i))).Status
	}
	for i := range maxInFlight {
		wg.Add(1)
		go handle(i)
	}
	require.Eventually(t, func() bool { return q.calls() == maxInFlight }, 10*time.Second, time.Millisecond, "the first pods are sent at once")
	for i := maxInFlight; i < 26; i++ {
		wg.Add(1)
		go handle(i)
	}
	require.Eventually(t, func() bool {
		in.coalesce.mu.Lock()
		defer in.coalesce.mu.Unlock()
		return len(in.coalesce.waiting) == 26-maxInFlight
	}, 10*time.Second, time.Millisecond, "the others wait for a call to return")
	close(q.release)
	wg.Wait()

	for i, a := range answers {
		assert.Equal(t, http.StatusOK, a, "request %d", i)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	assert.Len(t, q.singles, maxInFlight)
	require.Len(t, q.batches, 3, "22 waiting pods in batches of at most ten")
	sent := 0
	for _, b := range q.batches {
		assert.LessOrEqual(t, len(b), maxBatch)
		sent += len(b)
	}
	assert.Equal(t, 26-maxInFlight, sent)
	assert.True(t, in.coalesce.seen("uid-3", time.Now()), "a sent pod is remembered")
	assert.False(t, in.coalesce.seen("uid-7", time.Now()), "a pod SQS refused is not")
	q.mu.Unlock()
	assert.Eventually(t, func() bool {
		in.coalesce.mu.Lock()
		defer in.coalesce.mu.Unlock()
		return in.coalesce.inFlight == 0
	}, 10*time.Second, time.Millisecond, "every call free again once the last batch has returned")
	q.mu.Lock()
}

// TestAPodSentRecentlyIsNotSentAgain: the second Event about a pod (after its status changed) costs no SQS
// call within the deduplication window.
func TestAPodSentRecentlyIsNotSentAgain(t *testing.T) {
	q := &gatedQueue{release: make(chan struct{})}
	close(q.release) // nothing is held
	in := &Intake{Cluster: "demo", QueueURL: "q", Tokens: fixedTokens{token}, Queue: q,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: func() time.Time { return observed }}
	for i := 0; i < 3; i++ {
		require.Equal(t, http.StatusOK, in.Handle(context.Background(), "/webhook/"+token, eventFor(t, "uid-a")).Status)
	}
	require.Equal(t, http.StatusOK, in.Handle(context.Background(), "/webhook/"+token, eventFor(t, "uid-b")).Status)
	assert.Equal(t, []string{"uid-a", "uid-b"}, q.singles)

	in.coalesce.remember(time.Now().Add(-recentFor), "uid-a")
	require.Equal(t, http.StatusOK, in.Handle(context.Background(), "/webhook/"+token, eventFor(t, "uid-a")).Status)
	assert.Equal(t, []string{"uid-a", "uid-b", "uid-a"}, q.singles, "sent again once the window has passed")
}

func TestTheMemoryOfSentPodsIsBounded(t *testing.T) {
	var c coalescer
	now := time.Now()
	for i := 0; i < maxRecent; i++ {
		c.remember(now.Add(-recentFor), fmt.Sprint("old-", i))
	}
	c.remember(now, "new")
	assert.Len(t, c.recent, 1, "expired entries are dropped when the memory is full")
	for i := 0; i < maxRecent; i++ {
		c.remember(now, fmt.Sprint("live-", i))
	}
	assert.LessOrEqual(t, len(c.recent), maxRecent)
}

// fixedTokens accepts one token.
type fixedTokens struct{ token string }

func (f fixedTokens) Valid(_ context.Context, presented string) bool { return presented == f.token }
