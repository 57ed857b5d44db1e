package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// runner is the consolidation use case; *disruptionrun.Runner satisfies it.
type runner interface {
	Run(ctx context.Context, runID string) (disruptionrun.Report, error)
}

var _ runner = (*disruptionrun.Runner)(nil)

// handler serves both triggers with one consolidation run per invocation: the one-minute EventBridge
// schedule and a batch of wake-up messages (termination.DisruptionWake) from the disruption queue. A
// message is only a wake-up call: the run reads the whole cluster and state itself. A malformed message
// is logged once and acknowledged; when the run fails, the well-formed messages of the batch are reported
// as batch item failures so SQS delivers them again (and, past the queue's receive limit, to its
// dead-letter queue), and the schedule is the retry for the rest. It never panics and never fails the
// invocation.
func handler(r runner, observe func(disruptionrun.Report), log *slog.Logger) func(context.Context, json.RawMessage) (events.SQSEventResponse, error) {
	return func(ctx context.Context, payload json.RawMessage) (resp events.SQSEventResponse, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "disruption run panicked; the schedule retries", "panic", fmt.Sprint(p))
				resp, err = events.SQSEventResponse{}, nil
			}
		}()
		var batch events.SQSEvent
		var wakes []events.SQSMessage
		kind := "schedule"
		if json.Unmarshal(payload, &batch) == nil && len(batch.Records) > 0 {
			kind = "queue"
			for _, m := range batch.Records {
				var w termination.DisruptionWake
				if err := json.Unmarshal([]byte(m.Body), &w); err != nil {
					log.WarnContext(ctx, "malformed disruption wake-up dropped", "messageId", m.MessageId, "reason", err.Error())
					continue
				}
				wakes = append(wakes, m)
			}
		}
		runID := "local"
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			runID = lc.AwsRequestID
		}
		rep, runErr := r.Run(ctx, runID)
		if observe != nil && runErr == nil && rep.Lease {
			observe(rep)
		}
		attrs := []any{"trigger", kind, "messages", len(batch.Records), "lease", rep.Lease, "commands", len(rep.Commands),
			"advanced", rep.Advanced, "taintsLifted", rep.TaintsLifted, "rejected", rep.Rejected, "rolledBack", rep.RolledBack,
			"evaluationMillis", rep.Evaluation.Milliseconds()}
		if rep.BlockDrains+rep.Demoted+rep.Relabelled > 0 {
			attrs = append(attrs, "capacityBlockDrains", rep.BlockDrains, "reservationsDemoted", rep.Demoted, "nodesRelabelled", rep.Relabelled)
		}
		if len(rep.StaticScaleDown)+len(rep.StaticDrift) > 0 {
			attrs = append(attrs, "staticScaleDown", rep.StaticScaleDown, "staticDrift", rep.StaticDrift)
		}
		if rep.MirrorsWritten+rep.MirrorsDeleted+rep.MirrorEvents > 0 {
			attrs = append(attrs, "mirrorsWritten", rep.MirrorsWritten, "mirrorsDeleted", rep.MirrorsDeleted, "mirrorEvents", rep.MirrorEvents)
		}
		if rep.LeaseNotReleased != "" {
			attrs = append(attrs, "leaseNotReleased", rep.LeaseNotReleased)
		}
		for _, c := range rep.Commands {
			attrs = append(attrs, "command", fmt.Sprintf("%s/%s/%s: %s", c.Reason, c.Method, c.Action, c.Why))
		}
		switch {
		case runErr != nil:
			log.ErrorContext(ctx, "disruption run failed", append(attrs, "error", runErr.Error())...)
			for _, m := range wakes {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		case !rep.Lease:
			log.InfoContext(ctx, "another run holds the disruption lease", attrs...)
		case rep.Skipped != "":
			log.WarnContext(ctx, "disruption run decided nothing", append(attrs, "skipped", rep.Skipped, "errors", rep.Errors)...)
		default:
			log.InfoContext(ctx, "disruption run", append(attrs, "errors", rep.Errors)...)
		}
		return resp, nil
	}
}
