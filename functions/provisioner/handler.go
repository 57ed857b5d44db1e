package main

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/nodewright/nodewright/shared/provisioning"
)

// runner is the provisioning use case; *provisioning.Provisioner satisfies it.
type runner interface {
	Handle(ctx context.Context, runID string, t provisioning.Trigger) provisioning.Outcome
}

var _ runner = (*provisioning.Provisioner)(nil)

// handler serves both triggers with at most one provisioning run per invocation: a batch from the
// provisioning FIFO queue (pod references from the webhook) and the one-minute backstop schedule. A run
// solves for every pending pod in its own snapshot, so messages are only wake-up calls: a batch sent
// before the last completed run's snapshot is acknowledged without a solve, and a newer one coalesces
// into one run. Every message is acknowledged, also when the run fails, because the pods stay pending
// and the backstop's next run sees them again; a failed batch would only hold up the FIFO group.
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
		kind := "schedule"
		if trigger.Queue() {
			kind = "queue"
		}
		rep := out.Report
		attrs := []any{"trigger", kind, "messages", trigger.Messages, "coalesced", out.Coalesced, "lease", rep.Lease,
			"pendingPods", rep.PendingPods, "inFlight", rep.InFlight, "launched", len(rep.Claims),
			"unschedulable", len(rep.Unschedulable), "skipped", len(rep.Skipped), "solveMillis", rep.SolveDuration.Milliseconds()}
		switch {
		case out.Coalesced:
			log.InfoContext(ctx, "triggers older than the last completed snapshot; coalesced without a run",
				append(attrs, "newestSent", trigger.NewestSent, "snapshotMark", out.Mark)...)
		case out.Err != nil:
			log.ErrorContext(ctx, "provisioning run failed; the backstop retries", append(attrs, "error", out.Err.Error())...)
		case !rep.Lease:
			log.InfoContext(ctx, "another run holds the provisioner lease; coalesced", attrs...)
		default:
			log.InfoContext(ctx, "provisioning run", append(attrs, "errors", rep.Errors)...)
		}
		return events.SQSEventResponse{}, nil
	}
}
