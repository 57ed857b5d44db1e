// Package interruption turns what the interruption queue delivers into typed interruption messages.
//
// Ring: use case input. The package is pure: it reads bytes and the Lambda SQS event struct and returns
// values; it holds no AWS client, no clock and does not log. The handler in functions/interruption logs
// each outcome once and decides what to acknowledge.
//
// Parse reads one SQS message body (an EventBridge event as JSON) and dispatches on source and
// detail-type to the parser of that kind under messages/. ParseSQSEvent does the same for every record
// of a Lambda SQS batch and keeps each result next to its SQS message id.
//
// Error contract, for the handler: every error returned by Parse is final for that message body —
// retrying the same bytes gives the same answer — so the handler acknowledges the message and never
// reports it as a batch item failure:
//   - *messages.MalformedError: the body is not a well-formed event of a kind we know; it names the
//     field and the reason (log at warn level).
//   - *messages.UnknownKindError: a well-formed event of a source, detail-type or version we do not
//     handle (log at info level).
//
// A message of kind messages.NoOpKind (a state change to pending or running, a health event for another
// service) parses without error and asks for no action.
//
// The dispatcher lives here rather than in messages because every kind's package imports messages for
// the envelope, the Message interface and the errors.
package interruption
