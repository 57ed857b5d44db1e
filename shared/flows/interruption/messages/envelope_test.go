package messages_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

const validEvent = `{
  "version": "0",
  "id": "e-1",
  "detail-type": "EC2 Instance Rebalance Recommendation",
  "source": "aws.ec2",
  "account": "210987654321",
  "time": "2026-11-20T13:58:27Z",
  "region": "us-west-2",
  "resources": ["arn:aws:ec2:us-west-2:210987654321:instance/i-07d2e9b15a3c48f61"],
  "detail": {"instance-id": "i-07d2e9b15a3c48f61"}
}`

func TestDecodeEnvelope(t *testing.T) {
	env, detail, err := messages.DecodeEnvelope([]byte(validEvent))
	require.NoError(t, err)
	assert.Equal(t, messages.Envelope{
		Version:    "0",
		ID:         "e-1",
		DetailType: "EC2 Instance Rebalance Recommendation",
		Source:     "aws.ec2",
		Account:    "210987654321",
		Time:       time.Date(2026, 11, 20, 13, 58, 27, 0, time.UTC),
		Region:     "us-west-2",
		Resources:  []string{"arn:aws:ec2:us-west-2:210987654321:instance/i-07d2e9b15a3c48f61"},
	}, env)
	assert.JSONEq(t, `{"instance-id": "i-07d2e9b15a3c48f61"}`, string(detail))
	assert.Equal(t, "e-1", env.EventID())
	assert.Equal(t, env.Time, env.StartTime())
}

func TestDecodeEnvelopeMalformed(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		eventID string
		field   string
		reason  string
	}{
		{name: "empty body", body: ``, field: "body", reason: "invalid JSON"},
		{name: "truncated", body: validEvent[:60], field: "body", reason: "invalid JSON"},
		{name: "array", body: `[1,2]`, field: "body", reason: "want"},
		{name: "string", body: `"hello"`, field: "body", reason: "want"},
		{name: "null", body: `null`, field: "id", reason: "missing"},
		{name: "empty object", body: `{}`, field: "id", reason: "missing"},
		{name: "id of wrong type", body: `{"id": 7}`, field: "id", reason: "want string"},
		{name: "resources of wrong type", body: `{"id": "e-1", "resources": "i-1"}`, eventID: "e-1", field: "resources", reason: "want []string"},
		{name: "missing version", body: `{"id":"e-1","source":"aws.ec2","detail-type":"x","time":"2026-11-20T13:58:27Z","detail":{}}`, eventID: "e-1", field: "version", reason: "missing"},
		{name: "missing source", body: `{"id":"e-1","version":"0","detail-type":"x","time":"2026-11-20T13:58:27Z","detail":{}}`, eventID: "e-1", field: "source", reason: "missing"},
		{name: "missing detail-type", body: `{"id":"e-1","version":"0","source":"aws.ec2","time":"2026-11-20T13:58:27Z","detail":{}}`, eventID: "e-1", field: "detail-type", reason: "missing"},
		{name: "missing time", body: `{"id":"e-1","version":"0","source":"aws.ec2","detail-type":"x","detail":{}}`, eventID: "e-1", field: "time", reason: "missing"},
		{name: "bad time", body: `{"id":"e-1","version":"0","source":"aws.ec2","detail-type":"x","time":"yesterday","detail":{}}`, eventID: "e-1", field: "time", reason: "not an RFC 3339 time"},
		{name: "missing detail", body: `{"id":"e-1","version":"0","source":"aws.ec2","detail-type":"x","time":"2026-11-20T13:58:27Z"}`, eventID: "e-1", field: "detail", reason: "missing"},
		{name: "null detail", body: `{"id":"e-1","version":"0","source":"aws.ec2","detail-type":"x","time":"2026-11-20T13:58:27Z","detail":null}`, eventID: "e-1", field: "detail", reason: "missing"},
		{name: "detail not an object", body: `{"id":"e-1","version":"0","source":"aws.ec2","detail-type":"x","time":"2026-11-20T13:58:27Z","detail":"i-1"}`, eventID: "e-1", field: "detail", reason: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := messages.DecodeEnvelope([]byte(tt.body))
			var m *messages.MalformedError
			require.True(t, errors.As(err, &m), "got %v", err)
			assert.Equal(t, tt.eventID, m.EventID)
			assert.Equal(t, tt.field, m.Field)
			assert.Contains(t, m.Reason, tt.reason)
		})
	}
}

func TestDecodeDetail(t *testing.T) {
	env := messages.Envelope{ID: "e-1"}
	var v struct {
		InstanceID string `json:"instance-id"`
		Entities   []struct {
			Value string `json:"entityValue"`
		} `json:"affectedEntities"`
	}
	require.NoError(t, messages.DecodeDetail(env, json.RawMessage(`{"instance-id":"i-1"}`), &v))
	assert.Equal(t, "i-1", v.InstanceID)

	err := messages.DecodeDetail(env, json.RawMessage(`{"instance-id":42}`), &v)
	var m *messages.MalformedError
	require.True(t, errors.As(err, &m))
	assert.Equal(t, "detail.instance-id", m.Field)
	assert.Equal(t, "e-1", m.EventID)

	err = messages.DecodeDetail(env, json.RawMessage(`{"affectedEntities":[{"entityValue":false}]}`), &v)
	require.True(t, errors.As(err, &m))
	assert.Equal(t, "detail.affectedEntities.entityValue", m.Field)

	err = messages.DecodeDetail(env, json.RawMessage(`{"instance-id"`), &v)
	require.True(t, errors.As(err, &m))
	assert.Equal(t, "detail", m.Field)
}
