package provisioning

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// countingCluster counts snapshots: one per run that got past the lease and the config.
type countingCluster struct {
	fakeCluster
	n atomic.Int32
}

func (c *countingCluster) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	c.n.Add(1)
	return c.fakeCluster.Snapshot(ctx)
}

func batch(t *testing.T, sent ...time.Time) []byte {
	t.Helper()
	var ev events.SQSEvent
	for i, s := range sent {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprint(i), Body: `{"cluster":"demo"}`,
			Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(s.UnixMilli(), 10)}})
	}
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	return b
}

func TestTriggerOf(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	tr := TriggerOf(batch(t, t0, t0.Add(2*time.Second), t0.Add(time.Second)))
	assert.Equal(t, 3, tr.Messages)
	assert.True(t, tr.NewestSent.Equal(t0.Add(2*time.Second)), "the newest message decides: %s", tr.NewestSent)
	assert.True(t, tr.OldestSent.Equal(t0), "the oldest message bounds the batch window: %s", tr.OldestSent)

	assert.False(t, TriggerOf([]byte(`{"source":"aws.scheduler","detail-type":"Scheduled Event"}`)).Queue(), "a schedule event")
	assert.False(t, TriggerOf([]byte(`not json`)).Queue())

	noTime := `{"Records":[{"messageId":"1","body":"{\"observedAt\":\"2026-11-22T10:00:00.5Z\"}"},{"messageId":"2","body":"{}"}]}`
	tr = TriggerOf([]byte(noTime))
	assert.Equal(t, 2, tr.Messages)
	assert.True(t, tr.NewestSent.IsZero(), "a message without any time makes the batch uncoalescable")
	assert.True(t, tr.OldestSent.IsZero())

	replacement := `{"Records":[{"messageId":"1","body":"{\"cluster\":\"demo\",\"claim\":\"default-abcde\",\"reason\":\"SpotInterruption\"}"},` +
		`{"messageId":"2","body":"{\"cluster\":\"demo\",\"name\":\"p\"}"}]}`
	assert.True(t, TriggerOf([]byte(replacement)).Urgent, "an interruption's replacement request is urgent")
	assert.False(t, TriggerOf(batch(t, time.Now())).Urgent, "pod references are not")

	observed := `{"Records":[{"messageId":"1","body":"{\"observedAt\":\"2026-11-22T10:00:00.5Z\"}"}]}`
	assert.Equal(t, time.Date(2026, 11, 22, 10, 0, 0, 5e8, time.UTC), TriggerOf([]byte(observed)).NewestSent.UTC(),
		"the pod reference's observedAt stands in for a missing SentTimestamp")
}

func TestHandleCoalescesBatchesAFinishedRunSaw(t *testing.T) {
	ctx := context.Background()
	cluster := &countingCluster{fakeCluster: fakeCluster{snap: pendingSnapshot()}}
	w := newTestProvisioner(t, cluster)

	before := time.Now().Add(-time.Second)
	first := w.p.Handle(ctx, "run-1", TriggerOf(batch(t, before)))
	require.NoError(t, first.Err)
	assert.False(t, first.Coalesced, "no run completed yet")
	assert.EqualValues(t, 1, cluster.n.Load())

	// 1000 triggers sent before that run's snapshot arrive in batches of 10: none solves again.
	for i := 0; i < 100; i++ {
		sent := make([]time.Time, 10)
		for j := range sent {
			sent[j] = before.Add(time.Duration(i*10+j) * time.Microsecond)
		}
		out := w.p.Handle(ctx, fmt.Sprint("run-b", i), TriggerOf(batch(t, sent...)))
		require.NoError(t, out.Err)
		assert.True(t, out.Coalesced, "batch %d", i)
	}
	assert.EqualValues(t, 1, cluster.n.Load(), "one snapshot for a thousand stale triggers")

	later := w.p.Handle(ctx, "run-2", TriggerOf(batch(t, before, time.Now().Add(time.Second))))
	assert.False(t, later.Coalesced, "a message sent after the last snapshot began gets a run")
	assert.False(t, later.Unsatisfied, "runs until one whose snapshot began after the message completed")
	assert.GreaterOrEqual(t, later.Runs, 2, "a message from a second ahead needs a run that starts after it")
	assert.EqualValues(t, 1+later.Runs, cluster.n.Load())

	sched := w.p.Handle(ctx, "run-3", TriggerOf([]byte(`{"source":"aws.events"}`)))
	assert.False(t, sched.Coalesced, "the backstop schedule always runs")
	assert.Equal(t, 1, sched.Runs, "once")
	assert.EqualValues(t, 2+later.Runs, cluster.n.Load())
}

func TestHandleDoesNotMarkAFailedSnapshot(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{err: fmt.Errorf("apiserver unavailable")})
	sent := time.Now().Add(-time.Second)
	out := w.p.Handle(ctx, "run-1", TriggerOf(batch(t, sent)))
	require.Error(t, out.Err)
	mark, err := w.store.Mark(ctx, SnapshotMark)
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "an incomplete run leaves no mark, so the next message is not coalesced")
	again := w.p.Handle(ctx, "run-2", TriggerOf(batch(t, sent)))
	assert.False(t, again.Coalesced)
}

func TestQuietWait(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	w := batchWindow{idle: 500 * time.Millisecond, max: 10 * time.Second}
	queue := func(sent time.Time) Trigger { return Trigger{Messages: 1, NewestSent: sent, OldestSent: sent} }
	assert.Equal(t, 400*time.Millisecond, quietWait(queue(now.Add(-100*time.Millisecond)), now, w), "the rest of the window")
	assert.Equal(t, time.Duration(0), quietWait(queue(now.Add(-time.Second)), now, w), "an old burst has settled")
	assert.Equal(t, w.idle, quietWait(queue(now.Add(time.Hour)), now, w), "a clock skewed into the future waits at most the window")
	assert.Equal(t, time.Duration(0), quietWait(Trigger{}, now, w), "the schedule never waits")
	assert.Equal(t, time.Duration(0), quietWait(Trigger{Messages: 3}, now, w), "a batch without times does not wait")
	assert.Equal(t, time.Duration(0), quietWait(queue(now), now, batchWindow{max: time.Second}), "no idle duration: no wait")
	urgent := queue(now)
	urgent.Urgent = true
	assert.Equal(t, time.Duration(0), quietWait(urgent, now, w), "a replacement request never waits")

	// BATCH_MAX_DURATION: the window never reaches past max after the batch's oldest message.
	long := Trigger{Messages: 2, NewestSent: now.Add(-100 * time.Millisecond), OldestSent: now.Add(-9800 * time.Millisecond)}
	assert.Equal(t, 200*time.Millisecond, quietWait(long, now, w), "100 ms after the newest, 9.8 s after the oldest: 200 ms to the max")
	long.OldestSent = now.Add(-12 * time.Second)
	assert.Equal(t, time.Duration(0), quietWait(long, now, w), "the oldest pod has waited past the max already")
}

// The batch window comes from the stored settings: batchIdleDuration 0s means no wait at all.
func TestHandleWaitsAsTheStoredSettingsSay(t *testing.T) {
	ctx := context.Background()
	sent := time.Now()
	for idle, waits := range map[time.Duration]bool{0: false, 2 * time.Second: true} {
		s := settings.Default()
		s.BatchIdleDuration = idle
		w := settingsWorld(t, &countingCluster{fakeCluster: fakeCluster{snap: pendingSnapshot()}}, poolAndClass, &s)
		out := w.p.Handle(ctx, "run-1", TriggerOf(batch(t, sent)))
		require.NoError(t, out.Err)
		assert.Equal(t, waits, out.Waited > 0, "idle %s: waited %s", idle, out.Waited)
		assert.LessOrEqual(t, out.Waited, idle)
	}
}

func TestHandleWaitsForABurstToSettle(t *testing.T) {
	ctx := context.Background()
	s := settings.Default()
	s.BatchIdleDuration = 300 * time.Millisecond
	w := settingsWorld(t, &countingCluster{fakeCluster: fakeCluster{snap: pendingSnapshot()}}, poolAndClass, &s)
	start := time.Now()
	out := w.p.Handle(ctx, "run-1", TriggerOf(batch(t, start.Add(-100*time.Millisecond))))
	require.NoError(t, out.Err)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "the rest of the burst window is kept")
}
