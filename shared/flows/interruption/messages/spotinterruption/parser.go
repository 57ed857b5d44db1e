package spotinterruption

import (
	"encoding/json"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// The event's source and detail-type.
const (
	Source     = "aws.ec2"
	DetailType = "EC2 Spot Instance Interruption Warning"
)

// Parse reads the detail of a spot interruption warning. detail.instance-id must be an instance id; the
// instance action is kept as delivered, even when it is empty or new, because the instance is lost
// either way.
func Parse(env messages.Envelope, detail json.RawMessage) (messages.Message, error) {
	m := Message{Envelope: env}
	if err := messages.DecodeDetail(env, detail, &m.Detail); err != nil {
		return nil, err
	}
	if err := messages.RequireInstanceID(env, "detail.instance-id", m.Detail.InstanceID); err != nil {
		return nil, err
	}
	return m, nil
}
