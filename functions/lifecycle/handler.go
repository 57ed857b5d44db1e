package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
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

// reportSink receives the report of each run that held the lease, for its metrics (NodePool usage, node
// repairs, nodes created, offering prices); nil drops it.
type reportSink func(lifecycle.RunReport)

// priceRefresh are the price refreshes that run beside the passes: spot prices from EC2 every invocation,
// on-demand prices from the Pricing API when they are due (every 12 hours).
type priceRefresh struct {
	spot     func(context.Context) error
	onDemand onDemandRefresher
}

// handler serves the lifecycle schedule: passes every Every while Nodes are joining (so a one-minute
// schedule still registers Nodes within seconds), and the price refreshes beside them, each bounded by its
// own deadline so neither holds up the passes. It logs one JSON summary line and never fails the
// invocation: the next schedule is the retry, and an EventBridge retry would only find the lease held.
func handler(r settler, prices priceRefresh, report reportSink, log *slog.Logger) func(context.Context, events.EventBridgeEvent) error {
	return func(ctx context.Context, ev events.EventBridgeEvent) error {
		runID := "local"
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			runID = lc.AwsRequestID
		}
		refreshed := make(chan error, 1)
		go func() {
			rctx, cancel := context.WithTimeout(ctx, spotRefreshTimeout)
			defer cancel()
			refreshed <- crash.Call(func() error { return prices.spot(rctx) })
		}()
		type onDemandResult struct {
			res pricing.OnDemandRefresh
			err error
		}
		onDemandDone := make(chan onDemandResult, 1)
		go func() {
			rctx, cancel := onDemandRefreshContext(ctx)
			defer cancel()
			var res pricing.OnDemandRefresh
			err := crash.Call(func() (err error) {
				res, err = prices.onDemand.Refresh(rctx)
				return err
			})
			onDemandDone <- onDemandResult{res, err}
		}()
		rep, err := r.RunUntilSettled(ctx, runID, Every)
		spotErr := <-refreshed
		onDemand := <-onDemandDone

		attrs := []any{"trigger", ev.DetailType, "eventId", ev.ID, "lease", rep.Lease, "passes", rep.Passes,
			"registered", rep.Registered, "initialized", rep.Initialized, "adopted", rep.Adopted,
			"rebuilt", rep.Rebuilt, "handedOver", rep.HandedOver, "claimsDeleted", rep.ClaimsDeleted,
			"joining", rep.Joining, "deferred", rep.Deferred, "waiting", rep.Waiting, "errors", rep.Errors}
		if len(rep.TemplatesDeleted) > 0 || len(rep.ProfilesDeleted) > 0 {
			attrs = append(attrs, "launchTemplatesDeleted", rep.TemplatesDeleted, "instanceProfilesDeleted", rep.ProfilesDeleted)
		}
		if len(rep.Held) > 0 {
			attrs = append(attrs, "held", rep.Held)
		}
		if rep.Skipped != "" {
			attrs = append(attrs, "skipped", rep.Skipped)
		}
		if rep.LeaseNotReleased != "" {
			attrs = append(attrs, "leaseNotReleased", rep.LeaseNotReleased)
		}
		if spotErr != nil {
			attrs = append(attrs, "spotRefreshError", spotErr.Error())
		}
		attrs = append(attrs, "onDemandPrices", onDemand.res.Source, "onDemandTypes", onDemand.res.Types)
		if onDemand.res.Refreshed {
			attrs = append(attrs, "onDemandRefreshed", true)
		}
		if onDemand.err != nil {
			attrs = append(attrs, "onDemandRefreshError", onDemand.err.Error())
		}
		if len(rep.Repairs) > 0 {
			attrs = append(attrs, "repairs", len(rep.Repairs))
		}
		if len(rep.RepairBlocked) > 0 {
			attrs = append(attrs, "repairBlocked", rep.RepairBlocked)
		}
		if len(rep.DeletionsRequested) > 0 {
			attrs = append(attrs, "mirrorDeletionsRequested", rep.DeletionsRequested)
		}
		if report != nil && rep.Lease {
			report(rep)
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
