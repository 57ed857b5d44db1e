package spotinterruption

import (
	"time"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// NoticePeriod is how long before the interruption EC2 emits the warning. The event carries no action
// time of its own (the instance metadata does), so the action time is the event's time plus this.
const NoticePeriod = 2 * time.Minute

// Instance actions EC2 announces in detail.instance-action.
const (
	ActionTerminate = "terminate"
	ActionStop      = "stop"
	ActionHibernate = "hibernate"
)

// Detail is the event's detail object.
type Detail struct {
	InstanceID     string `json:"instance-id"`
	InstanceAction string `json:"instance-action"`
}

// Message is a parsed spot interruption warning.
type Message struct {
	messages.Envelope
	Detail Detail `json:"detail"`
}

var (
	_ messages.Message   = Message{}
	_ messages.Deadliner = Message{}
)

// Kind is SpotInterruptionKind.
func (Message) Kind() messages.Kind { return messages.SpotInterruptionKind }

// InstanceIDs returns the one interrupted instance.
func (m Message) InstanceIDs() []string { return []string{m.Detail.InstanceID} }

// ActionTime is when EC2 is expected to act on the instance.
func (m Message) ActionTime() time.Time { return m.Time.Add(NoticePeriod) }

// Deadline is the action time.
func (m Message) Deadline() time.Time { return m.ActionTime() }
