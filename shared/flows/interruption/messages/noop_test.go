package messages_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func TestNoOp(t *testing.T) {
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	m := messages.NoOp{Envelope: messages.Envelope{ID: "e-1", Time: at}, Reason: "state running"}
	assert.Equal(t, messages.NoOpKind, m.Kind())
	assert.Equal(t, "e-1", m.EventID())
	assert.Equal(t, at, m.StartTime())
	assert.Empty(t, m.InstanceIDs())
}
