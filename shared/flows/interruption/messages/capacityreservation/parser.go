package capacityreservation

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// The event's source and detail-type.
const (
	Source     = "aws.ec2"
	DetailType = "EC2 Capacity Reservation Instance Interruption Warning"
)

// Parse reads the detail of a capacity reservation interruption warning. detail.instance-id must be an
// instance id; detail.instance-termination-time, when present, must be RFC 3339.
func Parse(env messages.Envelope, detail json.RawMessage) (messages.Message, error) {
	m := Message{Envelope: env}
	if err := messages.DecodeDetail(env, detail, &m.Detail); err != nil {
		return nil, err
	}
	if err := messages.RequireInstanceID(env, "detail.instance-id", m.Detail.InstanceID); err != nil {
		return nil, err
	}
	if s := m.Detail.InstanceTerminationTime; s != "" {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, &messages.MalformedError{EventID: env.ID, Field: "detail.instance-termination-time",
				Reason: "not an RFC 3339 time: " + strconv.Quote(s), Err: err}
		}
		m.TerminationTime = at.UTC()
	}
	return m, nil
}
