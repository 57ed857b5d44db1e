package statechange_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/statechange"
)

func TestParse(t *testing.T) {
	env := messages.Envelope{ID: "e-1"}
	tests := []struct {
		name      string
		detail    string
		wantKind  messages.Kind
		wantIDs   []string
		wantField string
	}{
		{name: "stopping", detail: `{"instance-id":"i-0b8e3f1a92c4d7605","state":"stopping"}`, wantKind: messages.InstanceStoppedKind, wantIDs: []string{"i-0b8e3f1a92c4d7605"}},
		{name: "stopped", detail: `{"instance-id":"i-0b8e3f1a92c4d7605","state":"stopped"}`, wantKind: messages.InstanceStoppedKind, wantIDs: []string{"i-0b8e3f1a92c4d7605"}},
		{name: "shutting-down", detail: `{"instance-id":"i-0f19a6c3d8e2b4570","state":"shutting-down"}`, wantKind: messages.InstanceTerminatedKind, wantIDs: []string{"i-0f19a6c3d8e2b4570"}},
		{name: "terminated", detail: `{"instance-id":"i-0f19a6c3d8e2b4570","state":"terminated"}`, wantKind: messages.InstanceTerminatedKind, wantIDs: []string{"i-0f19a6c3d8e2b4570"}},
		{name: "pending is a no-op", detail: `{"instance-id":"i-0e5a7b2c9d1f38640","state":"pending"}`, wantKind: messages.NoOpKind},
		{name: "running is a no-op", detail: `{"instance-id":"i-0e5a7b2c9d1f38640","state":"running"}`, wantKind: messages.NoOpKind},
		{name: "a new state is a no-op", detail: `{"instance-id":"i-0e5a7b2c9d1f38640","state":"levitating"}`, wantKind: messages.NoOpKind},
		{name: "missing state", detail: `{"instance-id":"i-0e5a7b2c9d1f38640"}`, wantField: "detail.state"},
		{name: "state of wrong type", detail: `{"instance-id":"i-0e5a7b2c9d1f38640","state":16}`, wantField: "detail.state"},
		{name: "missing instance id", detail: `{"state":"terminated"}`, wantField: "detail.instance-id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := statechange.Parse(env, json.RawMessage(tt.detail))
			if tt.wantField != "" {
				var m *messages.MalformedError
				require.True(t, errors.As(err, &m), "got %v", err)
				assert.Equal(t, tt.wantField, m.Field)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantKind, msg.Kind())
			assert.Equal(t, tt.wantIDs, msg.InstanceIDs())
			assert.Equal(t, "e-1", msg.EventID())
			if tt.wantKind == messages.NoOpKind {
				noop, ok := msg.(messages.NoOp)
				require.True(t, ok)
				assert.Contains(t, noop.Reason, "i-0e5a7b2c9d1f38640")
			}
		})
	}
}
