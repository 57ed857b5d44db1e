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
	Run(ctx context.Context, runID string) (provisioning.Report, error)
}

var _ runner = (*provisioning.Provisioner)(nil)

// handler serves both triggers with one provisioning run per invocation: a batch from the provisioning
// FIFO queue (pod references from the webhook) and the one-minute backstop schedule. A run solves for
// every pending pod it sees in its own snapshot, so the messages are only wake-up calls: however many
// arrive, they coalesce into this one run and are all acknowledged — also when the run fails, because the
// pods stay pending and the backstop's next run sees them again. A failed batch would only hold up the
// FIFO group behind it.
func handler(p runner, log *slog.Logger) func(context.Context, json.RawMessage) (events.SQSEventResponse, error) {
	return func(ctx context.Context, payload json.RawMessage) (events.SQSEventResponse, error) {
		trigger, messages := "schedule", 0
		var batch events.SQSEvent
		if json.Unmarshal(payload, &batch) == nil && len(batch.Records) > 0 {
			trigger, messages = "queue", len(batch.Records)
		}
		runID := "local"
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			runID = lc.AwsRequestID
		}
		rep, err := p.Run(ctx, runID)
		attrs := []any{"trigger", trigger, "messages", messages, "lease", rep.Lease, "pendingPods", rep.PendingPods,
			"inFlight", rep.InFlight, "launched", len(rep.Claims), "unschedulable", len(rep.Unschedulable),
			"skipped", len(rep.Skipped), "solveMillis", rep.SolveDuration.Milliseconds()}
		switch {
		case err != nil:
			log.ErrorContext(ctx, "provisioning run failed; the backstop retries", append(attrs, "error", err.Error())...)
		case !rep.Lease:
			log.InfoContext(ctx, "another run holds the provisioner lease; coalesced", attrs...)
		default:
			log.InfoContext(ctx, "provisioning run", append(attrs, "errors", rep.Errors)...)
		}
		return events.SQSEventResponse{}, nil
	}
}
