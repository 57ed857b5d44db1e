package spotinterruption_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/spotinterruption"
)

func TestMessage(t *testing.T) {
	at := time.Date(2026, 11, 20, 14, 3, 11, 0, time.UTC)
	m := spotinterruption.Message{
		Envelope: messages.Envelope{Version: "0", ID: "e-1", Source: spotinterruption.Source, DetailType: spotinterruption.DetailType, Time: at},
		Detail:   spotinterruption.Detail{InstanceID: "i-0c4f8a2d61b7e9035", InstanceAction: spotinterruption.ActionTerminate},
	}
	assert.Equal(t, messages.SpotInterruptionKind, m.Kind())
	assert.Equal(t, "e-1", m.EventID())
	assert.Equal(t, at, m.StartTime())
	assert.Equal(t, []string{"i-0c4f8a2d61b7e9035"}, m.InstanceIDs())
	assert.Equal(t, at.Add(2*time.Minute), m.ActionTime())
	assert.Equal(t, m.ActionTime(), m.Deadline())

	// A message marshals back into an event its parser reads.
	body, err := json.Marshal(m)
	require.NoError(t, err)
	env, detail, err := messages.DecodeEnvelope(body)
	require.NoError(t, err)
	again, err := spotinterruption.Parse(env, detail)
	require.NoError(t, err)
	assert.Equal(t, m, again)
}
