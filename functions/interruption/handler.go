package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/interruption"
)

// batchHandler is the interruption use case; *interruption.Service satisfies it.
type batchHandler interface {
	HandleBatch(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse
}

var _ batchHandler = (*interruption.Service)(nil)

// handler serves the interruption queue: the runtime decodes the SQS batch, the service handles every
// message (logging each outcome once) and the response lists only the messages SQS should redeliver.
// The invocation itself never fails: a failed invocation would redeliver the whole batch.
func handler(s batchHandler) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		return s.HandleBatch(ctx, ev), nil
	}
}
