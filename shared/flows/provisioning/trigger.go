package provisioning

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// SnapshotMark is the state-table mark at the start of the snapshot of the last complete run: a trigger
// sent before it has nothing that run did not already see.
const SnapshotMark = state.ProvisionerSnapshotMark

// Trigger is what woke the provisioner: a batch from the provisioning queue or the backstop schedule.
type Trigger struct {
	// Messages counts the queue messages; zero for the schedule.
	Messages int
	// NewestSent is when the batch's newest message was sent (zero for the schedule, or when no message
	// says), so a batch whose pods a completed run already saw can be acknowledged without a solve.
	// OldestSent is when its oldest was (zero likewise): the batch window never reaches past
	// BatchMaxDuration after it.
	NewestSent, OldestSent time.Time
	// Urgent is set when a message asks for replacement capacity for a disrupted claim (an interruption's
	// deadline is running): the run does not wait for a burst to settle.
	Urgent bool
	// Pods are the pods the webhook's messages name; Others counts the messages that name none
	// (replacement requests, anything else) and NewestOther is when the newest of those was sent (zero
	// when one of them does not say).
	Pods        []PodKey
	Others      int
	NewestOther time.Time
	// Receives is the most times SQS has delivered one of the batch's messages.
	Receives int
}

// PodKey names a pod the webhook reported pending.
type PodKey struct{ Namespace, Name, UID string }

// Queue reports whether the trigger is a queue batch.
func (t Trigger) Queue() bool { return t.Messages > 0 }

// TriggerOf reads a Lambda payload: an SQS batch (each message's SentTimestamp attribute, or the pod
// reference's observedAt when the attribute is missing) or anything else, which is the schedule.
func TriggerOf(payload []byte) Trigger {
	var batch events.SQSEvent
	if json.Unmarshal(payload, &batch) != nil || len(batch.Records) == 0 {
		return Trigger{}
	}
	t := Trigger{Messages: len(batch.Records)}
	timed, othersTimed := true, true
	for _, m := range batch.Records {
		var body struct {
			Claim      string    `json:"claim"`      // an interruption's replacement request
			ObservedAt time.Time `json:"observedAt"` // every message the webhook and interruption send
			// The webhook's pod reference.
			Namespace, Name, UID string
		}
		_ = json.Unmarshal([]byte(m.Body), &body) // a body that is not ours is only a wake-up call
		t.Urgent = t.Urgent || body.Claim != ""
		sent := body.ObservedAt
		if ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); err == nil && ms > 0 {
			sent = time.UnixMilli(ms)
		}
		if n, err := strconv.Atoi(m.Attributes["ApproximateReceiveCount"]); err == nil && n > t.Receives {
			t.Receives = n
		}
		if sent.IsZero() {
			timed = false // one message without a time: never coalesce the batch
		}
		if sent.After(t.NewestSent) {
			t.NewestSent = sent
		}
		if t.OldestSent.IsZero() || sent.Before(t.OldestSent) {
			t.OldestSent = sent
		}
		if body.Claim == "" && body.Namespace != "" && body.Name != "" {
			t.Pods = append(t.Pods, PodKey{Namespace: body.Namespace, Name: body.Name, UID: body.UID})
			continue
		}
		t.Others++
		othersTimed = othersTimed && !sent.IsZero()
		if sent.After(t.NewestOther) {
			t.NewestOther = sent
		}
	}
	if !timed {
		t.NewestSent, t.OldestSent = time.Time{}, time.Time{}
	}
	if !othersTimed {
		t.NewestOther = time.Time{}
	}
	return t
}

// Outcome is what Handle did with a trigger.
type Outcome struct {
	Trigger Trigger
	// Coalesced is true when the batch was acknowledged without a run: completed runs already saw what
	// its messages are about (see satisfied; Mark is the last complete snapshot's start).
	Coalesced bool
	Mark      time.Time
	// Report is the last run's; Runs counts the runs Handle tried (one that found the lease held
	// included).
	Report Report
	Runs   int
	// Waited is how long the first run waited, holding the lease, for the burst to settle (quietWait).
	Waited time.Duration
	// Timings are the invocation's runs, in order (one that found the lease held included): when each
	// started and how long its phases took.
	Timings []RunTiming
	// Launched are the claims every run of the invocation launched (Report has the last run's), and
	// PlacedInFlight every run's Report.PlacedInFlight, in the runs' order.
	Launched       []LaunchedClaim
	PlacedInFlight []InFlightPlacement
	// Capacity is the last capacity a run of the invocation summed (nil: none did; see CapacityEvery).
	Capacity *Capacity
	Err      error
	// Panics are the runs of this invocation that panicked (each a *crash.PanicError with its stack),
	// including those a later run got past: a panic is a defect, and must be seen even when the batch
	// ends well.
	Panics []error
	// Unsatisfied is set when the invocation ran out of time or runs before a completed run had seen
	// every pod the batch names as it is now (Err is the last run's, if it failed): the messages should
	// come back (see BatchResponse).
	Unsatisfied bool
}

// batchWindow is Karpenter's batching of pending pods: a run waits until idle has passed since the
// newest pod, but never past max after the oldest (BATCH_IDLE_DURATION, BATCH_MAX_DURATION).
type batchWindow struct{ idle, max time.Duration }

// windowOf is the batch window of s.
func windowOf(s settings.Settings) batchWindow {
	return batchWindow{idle: s.BatchIdleDuration, max: s.BatchMaxDuration}
}

// quietWait is how long a run for t, starting at now, waits before its snapshot: until w.idle after the
// batch's newest message and no later than w.max after its oldest, never longer than w.idle from now.
// The schedule, an urgent batch and one whose messages do not all say when they were sent never wait.
func quietWait(t Trigger, now time.Time, w batchWindow) time.Duration {
	if !t.Queue() || t.Urgent || t.NewestSent.IsZero() || w.idle <= 0 {
		return 0
	}
	until := t.NewestSent.Add(w.idle)
	if w.max > 0 && !t.OldestSent.IsZero() && t.OldestSent.Add(w.max).Before(until) {
		until = t.OldestSent.Add(w.max)
	}
	return max(min(until.Sub(now), w.idle), 0)
}

// markSnapshot records that a run over a snapshot taken at start, whose pods were listed at revision
// podsRV, completed. The mark and the revision are written at once: a batch's check reads both, and
// each is true once the run is done, so a check that sees one without the other is not misled.
func (p *Provisioner) markSnapshot(ctx context.Context, start time.Time, podsRV string, rep *Report) {
	var markErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer crash.Capture(&markErr)
		markErr = p.deps.Store.AdvanceMark(ctx, SnapshotMark, start)
	})
	defer func() {
		wg.Wait()
		if markErr != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("recording the snapshot mark: %v", markErr))
		}
	}()
	rv, err := strconv.ParseUint(podsRV, 10, 64)
	if err != nil {
		return // revisions that are not numbers: batches are judged by when their messages were sent
	}
	if err := p.deps.Store.AdvanceRevision(ctx, PodsRevision, rv); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording the snapshot revision: %v", err))
	}
}
