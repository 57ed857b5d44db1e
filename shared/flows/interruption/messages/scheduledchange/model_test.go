package scheduledchange_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/scheduledchange"
)

func TestMessage(t *testing.T) {
	at := time.Date(2026, 11, 6, 9, 15, 30, 0, time.UTC)
	start := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	m := scheduledchange.Message{
		Envelope: messages.Envelope{ID: "e-1", Time: at},
		Detail: scheduledchange.Detail{AffectedEntities: []scheduledchange.AffectedEntity{
			{EntityValue: "i-03c7e1b9a5d2f6840"},
			{EntityValue: "h-0a1b2c3d4e5f60718"},
			{EntityValue: "i-09f2d8a4c6e1b3750"},
			{EntityValue: "i-03c7e1b9a5d2f6840"},
			{EntityValue: ""},
		}},
		WindowStart: start,
		WindowEnd:   start.Add(2 * time.Hour),
	}
	assert.Equal(t, messages.ScheduledChangeKind, m.Kind())
	assert.Equal(t, "e-1", m.EventID())
	assert.Equal(t, at, m.StartTime(), "StartTime is the event's time, not the window's")
	assert.Equal(t, []string{"i-03c7e1b9a5d2f6840", "i-09f2d8a4c6e1b3750"}, m.InstanceIDs())
	assert.Equal(t, start, m.Deadline())
	assert.Empty(t, scheduledchange.Message{}.InstanceIDs())
}
