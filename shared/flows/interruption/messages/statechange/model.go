package statechange

import (
	"strings"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// EC2 instance states as detail.state carries them.
const (
	StatePending      = "pending"
	StateRunning      = "running"
	StateStopping     = "stopping"
	StateStopped      = "stopped"
	StateShuttingDown = "shutting-down"
	StateTerminated   = "terminated"
)

// Detail is the event's detail object.
type Detail struct {
	InstanceID string `json:"instance-id"`
	State      string `json:"state"`
}

// Message is a parsed state change to a state we act on.
type Message struct {
	messages.Envelope
	Detail Detail `json:"detail"`
}

var _ messages.Message = Message{}

// KindOf maps an instance state (any case) to the kind a state change to it has.
func KindOf(state string) messages.Kind {
	switch strings.ToLower(state) {
	case StateStopping, StateStopped:
		return messages.InstanceStoppedKind
	case StateShuttingDown, StateTerminated:
		return messages.InstanceTerminatedKind
	default:
		return messages.NoOpKind
	}
}

// Kind is InstanceStoppedKind or InstanceTerminatedKind, by state.
func (m Message) Kind() messages.Kind { return KindOf(m.Detail.State) }

// InstanceIDs returns the one instance that changed state.
func (m Message) InstanceIDs() []string { return []string{m.Detail.InstanceID} }
