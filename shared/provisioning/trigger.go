package provisioning

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/state"
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
	NewestSent time.Time
	// Urgent is set when a message asks for replacement capacity for a disrupted claim (an interruption's
	// deadline is running): the run does not wait for a burst to settle.
	Urgent bool
}

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
	timed := true
	for _, m := range batch.Records {
		var body struct {
			Claim      string    `json:"claim"`      // an interruption's replacement request
			ObservedAt time.Time `json:"observedAt"` // every message the webhook and interruption send
		}
		_ = json.Unmarshal([]byte(m.Body), &body) // a body that is not ours is only a wake-up call
		t.Urgent = t.Urgent || body.Claim != ""
		sent := body.ObservedAt
		if ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); err == nil && ms > 0 {
			sent = time.UnixMilli(ms)
		}
		if sent.IsZero() {
			timed = false // one message without a time: never coalesce the batch
		}
		if sent.After(t.NewestSent) {
			t.NewestSent = sent
		}
	}
	if !timed {
		t.NewestSent = time.Time{}
	}
	return t
}

// Outcome is what Handle did with a trigger.
type Outcome struct {
	Trigger Trigger
	// Coalesced is true when the batch was acknowledged without a run: a run that started its snapshot
	// after the newest message was sent has completed (Mark is that snapshot's start).
	Coalesced bool
	Mark      time.Time
	Report    Report
	Err       error
}

// Handle runs provisioning for a trigger, or coalesces it into a run that already saw its pods. A
// schedule always runs (it is the backstop for anything a message could not say). A mark that cannot be
// read never coalesces: a spare run costs a solve, a missed one costs a pod.
//
// A queue run lets a burst of pending pods finish arriving before its snapshot: kube-scheduler marks a
// scaled-up deployment's pods one by one as the ReplicaSet creates them, and one solve over all of them
// packs better than one per message batch. Holding the lease, the run waits until BatchIdle has passed
// since the newest message was sent (never longer than BatchIdle); the schedule and replacement requests
// (an interruption's clock is running) never wait.
func (p *Provisioner) Handle(ctx context.Context, runID string, t Trigger) Outcome {
	out := Outcome{Trigger: t}
	if t.Queue() && !t.NewestSent.IsZero() {
		mark, err := p.deps.Store.Mark(ctx, SnapshotMark)
		if err == nil && t.NewestSent.Before(mark) {
			return Outcome{Trigger: t, Coalesced: true, Mark: mark}
		}
		out.Mark = mark
	}
	out.Report, out.Err = p.runAfter(ctx, runID, quietWait(t, p.deps.Now(), p.cfg.BatchIdle))
	return out
}

// quietWait is how long a run for t, starting at now, waits before its snapshot.
func quietWait(t Trigger, now time.Time, idle time.Duration) time.Duration {
	if !t.Queue() || t.Urgent || t.NewestSent.IsZero() || idle <= 0 {
		return 0
	}
	return max(min(t.NewestSent.Add(idle).Sub(now), idle), 0)
}

// markSnapshot records that a run over a snapshot taken at start completed.
func (p *Provisioner) markSnapshot(ctx context.Context, start time.Time, rep *Report) {
	if err := p.deps.Store.AdvanceMark(ctx, SnapshotMark, start); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording the snapshot mark: %v", err))
	}
}
