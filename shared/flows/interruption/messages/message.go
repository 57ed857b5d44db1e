package messages

import "time"

// Message is one parsed interruption event.
type Message interface {
	// Kind says what the message asks for.
	Kind() Kind
	// EventID is the EventBridge event id; the handler deduplicates on it. Never empty.
	EventID() string
	// InstanceIDs are the EC2 instances the message is about (i-…), without duplicates. Empty for NoOp.
	// An id may belong to no claim of ours; matching is the handler's job.
	InstanceIDs() []string
	// StartTime is when AWS emitted the event (the envelope's time), for latency metrics and ordering.
	StartTime() time.Time
}

// Deadliner is implemented by messages that carry a moment after which the instance is gone or
// changed: the spot action time, the capacity reservation's termination time, the start of a
// scheduled change's window. Deadline is zero when the event does not say.
type Deadliner interface {
	Deadline() time.Time
}
