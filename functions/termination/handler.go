package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/flows/termination"
)

// batchHandler is the termination use case; *termination.Service satisfies it.
type batchHandler interface {
	Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, termination.BatchStats)
}

var _ batchHandler = (*termination.Service)(nil)

// handler hands a termination-queue batch to the use case, gives report what the batch did (nil: nobody
// listens) and returns its partial batch failures; the invocation itself never fails, so one bad message
// cannot hold back the others.
func handler(s batchHandler, report func(termination.BatchStats)) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, stats := s.Handle(ctx, ev)
		if report != nil {
			report(stats)
		}
		return resp, nil
	}
}
