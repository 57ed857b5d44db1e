package provisioning

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// SnapshotMark is the state-table mark at the start of the snapshot of the last complete run: a trigger
// sent before it has nothing that run did not already see.
const SnapshotMark = "provisioner-snapshot"

// Trigger is what woke the provisioner: a batch from the provisioning queue or the backstop schedule.
type Trigger struct {
	// Messages counts the queue messages; zero for the schedule.
	Messages int
	// NewestSent is when the batch's newest message was sent (zero for the schedule, or when no message
	// says), so a batch whose pods a completed run already saw can be acknowledged without a solve.
	NewestSent time.Time
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
	for _, m := range batch.Records {
		sent, ok := sentAt(m)
		if !ok {
			return Trigger{Messages: t.Messages} // one message without a time: never coalesce the batch
		}
		if sent.After(t.NewestSent) {
			t.NewestSent = sent
		}
	}
	return t
}

func sentAt(m events.SQSMessage) (time.Time, bool) {
	if ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); err == nil && ms > 0 {
		return time.UnixMilli(ms), true
	}
	var ref struct {
		ObservedAt time.Time `json:"observedAt"`
	}
	if json.Unmarshal([]byte(m.Body), &ref) == nil && !ref.ObservedAt.IsZero() {
		return ref.ObservedAt, true
	}
	return time.Time{}, false
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
func (p *Provisioner) Handle(ctx context.Context, runID string, t Trigger) Outcome {
	out := Outcome{Trigger: t}
	if t.Queue() && !t.NewestSent.IsZero() {
		mark, err := p.deps.Store.Mark(ctx, SnapshotMark)
		if err == nil && t.NewestSent.Before(mark) {
			return Outcome{Trigger: t, Coalesced: true, Mark: mark}
		}
		out.Mark = mark
	}
	out.Report, out.Err = p.Run(ctx, runID)
	return out
}

// markSnapshot records that a run over a snapshot taken at start completed.
func (p *Provisioner) markSnapshot(ctx context.Context, start time.Time, rep *Report) {
	if err := p.deps.Store.AdvanceMark(ctx, SnapshotMark, start); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording the snapshot mark: %v", err))
	}
}
