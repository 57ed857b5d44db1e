// Package interruption turns what the interruption queue delivers into typed interruption messages and
// acts on them: replacement capacity first, then the drain.
//
// Ring: use case. Parsing (parse.go, sqs.go) and deciding (decide.go) are pure: bytes and values in,
// values out, no client, no clock, no logging. Service (service.go, handle.go, steps.go, requests.go,
// progress.go) carries the decisions out through small interfaces declared in service.go — the state
// table, Node actions, Kubernetes Events and an SQS sender — which *state.Store, *kube.Actions,
// *kube.Recorder and *sqs.Client satisfy; it logs each message's outcome once, as the boundary that
// decides what to acknowledge. functions/interruption only wires it.
//
// Service.HandleBatch, per message: deduplicate the EventBridge event id (state BeginEvent/CompleteEvent,
// scope "interruption"), find the claims of its instances, Decide, and carry out each step. Each step
// writes a decision record (subject nodeclaim/<name>, id <event id>/<step>) that doubles as its
// completion marker: a message redelivered after a crash skips the steps already recorded and resumes
// the rest (a claim drained by this very event counts as running again for Decide), and every step is
// safe to repeat should the crash fall between the action and its record. Replacement requests go to
// the provisioning FIFO queue with deduplication id interruption-<event id>-<claim>; termination
// requests (shared/flows/termination.Request) to the termination queue. A message that fails for a transient
// reason gives its event claim back (ReleaseEvent) and is tried again inside the invocation with backoff
// (shared/adapters/sqsbatch) while the deadline allows; what still failed, or had no time to start, is a batch
// item failure made visible again in seconds.
//
// Parse reads one SQS message body (an EventBridge event as JSON) and dispatches on source and
// detail-type to the parser of that kind under messages/. ParseSQSEvent does the same for every record
// of a Lambda SQS batch and keeps each result next to its SQS message id.
//
// Error contract of Parse: every error it returns is final for that message body — retrying the same
// bytes gives the same answer — so the service acknowledges the message and never reports it as a batch
// item failure:
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
