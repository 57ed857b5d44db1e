package main

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// runner is the provisioning use case; *provisioning.Provisioner satisfies it.
type runner interface {
	Handle(ctx context.Context, runID string, t provisioning.Trigger) provisioning.Outcome
	BatchResponse(ctx context.Context, ev events.SQSEvent, out provisioning.Outcome) events.SQSEventResponse
}

var _ runner = (*provisioning.Provisioner)(nil)

// handler serves both triggers with at most one provisioning run per invocation: a batch from the
// provisioning FIFO queue (pod references from the webhook) and the one-minute backstop schedule. A run
// solves for every pending pod in its own snapshot, so messages are only wake-up calls: a batch whose
// pods completed runs already saw as they are now is acknowledged without a solve, and a newer one gets
// runs until one has seen them (provisioning.Provisioner.Handle); a failed run is run again. Every message
// is acknowledged except a batch the invocation could not satisfy (no time left, or every run failed): it
// comes back in seconds, a few times at most (BatchResponse), and the backstop covers what remains.
func handler(p runner, observe func(provisioning.Outcome), log *slog.Logger) func(context.Context, json.RawMessage) (events.SQSEventResponse, error) {
	return func(ctx context.Context, payload json.RawMessage) (events.SQSEventResponse, error) {
		trigger := provisioning.TriggerOf(payload)
		runID := "local"
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			runID = lc.AwsRequestID
		}
		out := p.Handle(ctx, runID, trigger)
		if observe != nil {
			observe(out)
		}
		var resp events.SQSEventResponse
		if out.Unsatisfied {
			var ev events.SQSEvent
			if json.Unmarshal(payload, &ev) == nil {
				resp = p.BatchResponse(ctx, ev, out)
			}
		}
		kind := "schedule"
		if trigger.Queue() {
			kind = "queue"
		}
		rep := out.Report
		attrs := []any{"trigger", kind, "messages", trigger.Messages, "coalesced", out.Coalesced, "lease", rep.Lease,
			"pendingPods", rep.PendingPods, "inFlight", rep.InFlight, "launched", len(out.Launched),
			"unschedulable", len(rep.Unschedulable), "skipped", len(rep.Skipped),
			"readMillis", rep.ReadDuration.Milliseconds(), "prepareMillis", rep.PrepareDuration.Milliseconds(),
			"solveMillis", rep.SolveDuration.Milliseconds(), "launchMillis", rep.LaunchDuration.Milliseconds(),
			"finishMillis", rep.FinishDuration.Milliseconds(), "runs", out.Runs, "runMillis", runMillis(out.Timings)}
		if rep.LeaseNotReleased != "" {
			attrs = append(attrs, "leaseNotReleased", rep.LeaseNotReleased)
		}
		if len(rep.BackingOff) > 0 {
			attrs = append(attrs, "backingOff", rep.BackingOff)
		}
		if len(rep.Static) > 0 {
			attrs = append(attrs, "static", rep.Static)
		}
		if rep.MirrorsWritten+rep.MirrorsLeft > 0 {
			// The NodeClaim mirrors of the run's launches (provisioning.LaunchMirrors).
			attrs = append(attrs, "mirrorsWritten", rep.MirrorsWritten, "mirrorsLeft", rep.MirrorsLeft)
		}
		for _, p := range out.Panics {
			if p != out.Err { // the last run's error is logged below
				log.ErrorContext(ctx, "a provisioning run crashed; a later run of the invocation got past it",
					append(attrs, "error", p.Error())...)
			}
		}
		switch {
		case out.Coalesced:
			log.InfoContext(ctx, "triggers older than the last completed snapshot; coalesced without a run",
				append(attrs, "newestSent", trigger.NewestSent, "snapshotMark", out.Mark)...)
		case out.Err != nil:
			log.ErrorContext(ctx, "provisioning run failed; the batch is handed back or the backstop retries",
				append(attrs, "error", out.Err.Error(), "runs", out.Runs, "handedBack", len(resp.BatchItemFailures))...)
		case out.Unsatisfied:
			log.WarnContext(ctx, "no run the invocation could make saw every pod of the batch as it is now",
				append(attrs, "runs", out.Runs, "handedBack", len(resp.BatchItemFailures))...)
		case !rep.Lease:
			log.InfoContext(ctx, "another run holds the provisioner lease; coalesced", attrs...)
		default:
			log.InfoContext(ctx, "provisioning run", append(attrs, "runs", out.Runs, "errors", rep.Errors)...)
		}
		return resp, nil
	}
}

// runMillis is each run's duration from its read to its end, in milliseconds (0 for a run that found the
// lease held), so a log line shows how an invocation's chain of runs spent its time.
func runMillis(ts []provisioning.RunTiming) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.Total().Milliseconds()
	}
	return out
}
