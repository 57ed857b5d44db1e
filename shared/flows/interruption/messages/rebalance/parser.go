package rebalance

import (
	"encoding/json"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// The event's source and detail-type.
const (
	Source     = "aws.ec2"
	DetailType = "EC2 Instance Rebalance Recommendation"
)

// Parse reads the detail of a rebalance recommendation; detail.instance-id must be an instance id.
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
