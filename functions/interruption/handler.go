package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/flows/interruption"
)

// batchHandler is the interruption use case; *interruption.Service satisfies it.
type batchHandler interface {
	Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, interruption.BatchStats)
}

var _ batchHandler = (*interruption.Service)(nil)

// handler serves the interruption queue: the runtime decodes the SQS batch, the service handles every
// message (logging each outcome once), report receives what the batch did (nil: nobody listens) and the
// response lists only the messages SQS should redeliver. The invocation itself never fails: a failed
// invocation would redeliver the whole batch.
func handler(s batchHandler, report func(interruption.BatchStats)) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, stats := s.Handle(ctx, ev)
		if report != nil {
			report(stats)
		}
		return resp, nil
	}
}
