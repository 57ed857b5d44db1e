package rebalance_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/rebalance"
)

func TestParse(t *testing.T) {
	env := messages.Envelope{ID: "e-1"}
	tests := []struct {
		name      string
		detail    string
		wantField string
	}{
		{name: "valid", detail: `{"instance-id":"i-07d2e9b15a3c48f61"}`},
		{name: "short id", detail: `{"instance-id":"i-07d2e9b1"}`},
		{name: "missing instance id", detail: `{}`, wantField: "detail.instance-id"},
		{name: "instance id is an arn", detail: `{"instance-id":"arn:aws:ec2:us-west-2:210987654321:instance/i-07d2e9b15a3c48f61"}`, wantField: "detail.instance-id"},
		{name: "instance id of wrong type", detail: `{"instance-id":true}`, wantField: "detail.instance-id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := rebalance.Parse(env, json.RawMessage(tt.detail))
			if tt.wantField != "" {
				var m *messages.MalformedError
				require.True(t, errors.As(err, &m), "got %v", err)
				assert.Equal(t, tt.wantField, m.Field)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, messages.RebalanceRecommendationKind, msg.Kind())
			assert.Len(t, msg.InstanceIDs(), 1)
		})
	}
}
