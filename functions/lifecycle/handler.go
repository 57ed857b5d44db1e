package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/nodewright/nodewright/shared/lifecycle"
)

// Every is how often an invocation makes a pass while a Node is joining.
const Every = 5 * time.Second

// spotRefreshTimeout bounds the spot price refresh, which runs beside the passes.
const spotRefreshTimeout = 20 * time.Second

// settler is the lifecycle use case; *lifecycle.Runner satisfies it.
type settler interface {
	RunUntilSettled(ctx context.Context, runID string, every time.Duration) (lifecycle.RunReport, error)
}

var _ settler = (*lifecycle.Runner)(nil)

// handler serves the lifecycle schedule: passes every Every while Nodes are joining (so a one-minute
// schedule still registers Nodes within seconds), and one spot price refresh beside them. It logs one JSON
// summary line and never fails the invocation: the next schedule is the retry, and an EventBridge retry
// would only find the lease held.
// usageSink receives each run's NodePool usage (metrics); nil drops it.
type usageSink func([]lifecycle.PoolUsage)

func handler(r settler, refreshSpot func(context.Context) error, usage usageSink, log *slog.Logger) func(context.Context, events.EventBridgeEvent) error {
	return func(ctx context.Context, ev events.EventBridgeEvent) error {
		runID := "local"
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			runID = lc.AwsRequestID
		}
		refreshed := make(chan error, 1)
		go func() {
			rctx, cancel := context.WithTimeout(ctx, spotRefreshTimeout)
			defer cancel()
			refreshed <- refreshSpot(rctx)
		}()
		rep, err := r.RunUntilSettled(ctx, runID, Every)
		spotErr := <-refreshed

		attrs := []any{"trigger", ev.DetailType, "eventId", ev.ID, "lease", rep.Lease, "passes", rep.Passes,
			"registered", rep.Registered, "initialized", rep.Initialized, "adopted", rep.Adopted,
			"rebuilt", rep.Rebuilt, "handedOver", rep.HandedOver, "claimsDeleted", rep.ClaimsDeleted,
			"joining", rep.Joining, "waiting", rep.Waiting, "errors", rep.Errors}
		if len(rep.TemplatesDeleted) > 0 || len(rep.ProfilesDeleted) > 0 {
			attrs = append(attrs, "launchTemplatesDeleted", rep.TemplatesDeleted, "instanceProfilesDeleted", rep.ProfilesDeleted)
		}
		if len(rep.Held) > 0 {
			attrs = append(attrs, "held", rep.Held)
		}
		if rep.Skipped != "" {
			attrs = append(attrs, "skipped", rep.Skipped)
		}
		if spotErr != nil {
			attrs = append(attrs, "spotRefreshError", spotErr.Error())
		}
		if usage != nil && rep.Usage != nil {
			usage(rep.Usage)
		}
		switch {
		case err != nil:
			log.ErrorContext(ctx, "lifecycle run failed; the next schedule retries", append(attrs, "error", err.Error())...)
		case !rep.Lease:
			log.InfoContext(ctx, "another invocation holds the lifecycle lease", attrs...)
		default:
			log.InfoContext(ctx, "lifecycle run", attrs...)
		}
		return nil
	}
}
