package rebalance_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/rebalance"
)

func TestMessage(t *testing.T) {
	at := time.Date(2026, 11, 20, 13, 58, 27, 0, time.UTC)
	m := rebalance.Message{
		Envelope: messages.Envelope{ID: "e-1", Time: at},
		Detail:   rebalance.Detail{InstanceID: "i-07d2e9b15a3c48f61"},
	}
	assert.Equal(t, messages.RebalanceRecommendationKind, m.Kind())
	assert.Equal(t, "e-1", m.EventID())
	assert.Equal(t, at, m.StartTime())
	assert.Equal(t, []string{"i-07d2e9b15a3c48f61"}, m.InstanceIDs())
	_, hasDeadline := any(m).(messages.Deadliner)
	assert.False(t, hasDeadline, "a recommendation has no deadline")
}
