package capacityreservation_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/capacityreservation"
)

func TestMessage(t *testing.T) {
	at := time.Date(2026, 11, 20, 16, 40, 0, 0, time.UTC)
	m := capacityreservation.Message{
		Envelope: messages.Envelope{ID: "e-1", Time: at},
		Detail:   capacityreservation.Detail{InstanceID: "i-0a6d4c8e2f1b93750", InstanceAction: "terminate"},
	}
	assert.Equal(t, messages.CapacityReservationInterruptionKind, m.Kind())
	assert.Equal(t, "e-1", m.EventID())
	assert.Equal(t, at, m.StartTime())
	assert.Equal(t, []string{"i-0a6d4c8e2f1b93750"}, m.InstanceIDs())
	assert.Equal(t, at.Add(2*time.Minute), m.Deadline(), "no termination time: the notice period")

	m.TerminationTime = at.Add(90 * time.Second)
	assert.Equal(t, at.Add(90*time.Second), m.Deadline())
}
