package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/termination"
)

// batchHandler is the termination use case; *termination.Service satisfies it.
type batchHandler interface {
	HandleBatch(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse
}

var _ batchHandler = (*termination.Service)(nil)

// handler hands a termination-queue batch to the use case and reports its partial batch failures; the
// invocation itself never fails, so one bad message cannot hold back the others.
func handler(s batchHandler) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		return s.HandleBatch(ctx, ev), nil
	}
}
