package capacityreservation

import (
	"time"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// NoticePeriod is how long before termination EC2 emits the warning; it gives the deadline when the
// event carries no instance-termination-time.
const NoticePeriod = 2 * time.Minute

// Detail is the event's detail object.
type Detail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"`
	// InstanceTerminationTime is RFC 3339 text, kept as delivered; Message.TerminationTime is parsed.
	InstanceTerminationTime string `json:"instance-termination-time,omitempty"`
	// AvailabilityZoneID is the zone id (usw2-az2), not the zone name.
	AvailabilityZoneID string `json:"azId,omitempty"`
}

// Message is a parsed capacity reservation interruption warning.
type Message struct {
	messages.Envelope
	Detail Detail `json:"detail"`
	// TerminationTime is detail.instance-termination-time, zero when the event has none.
	TerminationTime time.Time `json:"-"`
}

var (
	_ messages.Message   = Message{}
	_ messages.Deadliner = Message{}
)

// Kind is CapacityReservationInterruptionKind.
func (Message) Kind() messages.Kind { return messages.CapacityReservationInterruptionKind }

// InstanceIDs returns the one instance to be terminated.
func (m Message) InstanceIDs() []string { return []string{m.Detail.InstanceID} }

// Deadline is the announced termination time, or the event's time plus NoticePeriod.
func (m Message) Deadline() time.Time {
	if !m.TerminationTime.IsZero() {
		return m.TerminationTime
	}
	return m.Time.Add(NoticePeriod)
}
