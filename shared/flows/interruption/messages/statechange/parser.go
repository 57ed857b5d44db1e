package statechange

import (
	"encoding/json"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// The event's source and detail-type.
const (
	Source     = "aws.ec2"
	DetailType = "EC2 Instance State-change Notification"
)

// Parse reads the detail of a state-change notification. detail.instance-id must be an instance id and
// detail.state must be present; a state we do not act on gives a messages.NoOp.
func Parse(env messages.Envelope, detail json.RawMessage) (messages.Message, error) {
	m := Message{Envelope: env}
	if err := messages.DecodeDetail(env, detail, &m.Detail); err != nil {
		return nil, err
	}
	if err := messages.RequireInstanceID(env, "detail.instance-id", m.Detail.InstanceID); err != nil {
		return nil, err
	}
	if m.Detail.State == "" {
		return nil, messages.Malformed(env, "detail.state", "missing")
	}
	if m.Kind() == messages.NoOpKind {
		return messages.NoOp{Envelope: env, Reason: "instance " + m.Detail.InstanceID + " is " + m.Detail.State}, nil
	}
	return m, nil
}
