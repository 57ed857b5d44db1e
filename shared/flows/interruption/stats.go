package interruption

import (
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// Message types counted for messages that did not parse, next to the kinds' own names.
const (
	MalformedMessageType = "malformed"
	UnknownMessageType   = "unknown"
)

// Disruption is a claim an interruption took out of service.
type Disruption struct {
	NodePool, Reason, CapacityType string
}

// BatchStats is what one batch did, for the function's metrics.
type BatchStats struct {
	// Received counts the batch's messages by type: a kind's name (spot_interrupted, ...), or
	// MalformedMessageType / UnknownMessageType for those that did not parse.
	Received map[string]int
	// Acknowledged are deleted from the queue; Failed are left for SQS to redeliver (requeued in seconds).
	Acknowledged, Failed int
	// Retries counts the tries after a message's first inside the invocation; Unstarted the messages
	// the invocation had no time left to start (also in Failed); Copied the failed messages sent again
	// as fresh copies and acknowledged (also in Failed; see FreshCopyAfterReceives).
	Retries, Unstarted, Copied int
	// QueueDurations are how long each message waited in the queue (SentTimestamp to now), where SQS said.
	QueueDurations []time.Duration
	// Disrupted are the claims the batch moved out of service (each counted once, whatever redeliveries).
	Disrupted []Disruption
	// MirrorsWritten counts the NodeClaim mirrors written after the messages' steps; MirrorsLeft those
	// left to the lifecycle's next sweep (the follower's bounds).
	MirrorsWritten, MirrorsLeft int
}

// messageType is how Received counts a parse result.
func messageType(r Result) string {
	switch {
	case r.Err == nil:
		return r.Message.Kind().String()
	case messages.IsUnknownKind(r.Err):
		return UnknownMessageType
	}
	return MalformedMessageType
}

// queueDuration is how long a record waited in the queue, from its SentTimestamp attribute (epoch ms).
func queueDuration(rec events.SQSMessage, now time.Time) (time.Duration, bool) {
	ms, err := strconv.ParseInt(rec.Attributes["SentTimestamp"], 10, 64)
	if err != nil {
		return 0, false
	}
	return max(now.Sub(time.UnixMilli(ms)), 0), true
}
