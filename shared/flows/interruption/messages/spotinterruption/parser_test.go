package spotinterruption_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/spotinterruption"
)

func TestParse(t *testing.T) {
	env := messages.Envelope{ID: "e-1", Source: spotinterruption.Source, DetailType: spotinterruption.DetailType}
	tests := []struct {
		name       string
		detail     string
		wantAction string
		wantField  string
	}{
		{name: "terminate", detail: `{"instance-id":"i-0c4f8a2d61b7e9035","instance-action":"terminate"}`, wantAction: "terminate"},
		{name: "stop", detail: `{"instance-id":"i-0c4f8a2d61b7e9035","instance-action":"stop"}`, wantAction: "stop"},
		{name: "hibernate", detail: `{"instance-id":"i-0c4f8a2d61b7e9035","instance-action":"hibernate"}`, wantAction: "hibernate"},
		{name: "unknown action kept", detail: `{"instance-id":"i-0c4f8a2d61b7e9035","instance-action":"evaporate"}`, wantAction: "evaporate"},
		{name: "missing action kept", detail: `{"instance-id":"i-0c4f8a2d61b7e9035"}`},
		{name: "extra fields ignored", detail: `{"instance-id":"i-0c4f8a2d61b7e9035","instance-action":"terminate","new":1}`, wantAction: "terminate"},
		{name: "missing instance id", detail: `{"instance-action":"terminate"}`, wantField: "detail.instance-id"},
		{name: "instance id not an id", detail: `{"instance-id":"node-1"}`, wantField: "detail.instance-id"},
		{name: "instance id of wrong type", detail: `{"instance-id":["i-0c4f8a2d61b7e9035"]}`, wantField: "detail.instance-id"},
		{name: "action of wrong type", detail: `{"instance-id":"i-0c4f8a2d61b7e9035","instance-action":1}`, wantField: "detail.instance-action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := spotinterruption.Parse(env, json.RawMessage(tt.detail))
			if tt.wantField != "" {
				var m *messages.MalformedError
				require.True(t, errors.As(err, &m), "got %v", err)
				assert.Equal(t, tt.wantField, m.Field)
				assert.Equal(t, "e-1", m.EventID)
				assert.Nil(t, msg)
				return
			}
			require.NoError(t, err)
			spot, ok := msg.(spotinterruption.Message)
			require.True(t, ok)
			assert.Equal(t, tt.wantAction, spot.Detail.InstanceAction)
			assert.Equal(t, []string{"i-0c4f8a2d61b7e9035"}, spot.InstanceIDs())
		})
	}
}
