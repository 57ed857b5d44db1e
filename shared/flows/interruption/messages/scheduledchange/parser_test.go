package scheduledchange_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/scheduledchange"
)

func TestParse(t *testing.T) {
	env := messages.Envelope{ID: "e-1"}
	const entities = `"affectedEntities":[{"entityValue":"i-03c7e1b9a5d2f6840"},{"entityValue":"i-09f2d8a4c6e1b3750"}]`
	start := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	end := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		detail    string
		wantKind  messages.Kind
		wantIDs   []string
		wantStart time.Time
		wantEnd   time.Time
		wantField string
	}{
		{
			name:     "rfc 1123 window",
			detail:   `{"service":"EC2","eventTypeCategory":"scheduledChange","statusCode":"upcoming","startTime":"Mon, 23 Nov 2026 08:00:00 GMT","endTime":"Mon, 23 Nov 2026 10:00:00 GMT",` + entities + `}`,
			wantKind: messages.ScheduledChangeKind, wantIDs: []string{"i-03c7e1b9a5d2f6840", "i-09f2d8a4c6e1b3750"}, wantStart: start, wantEnd: end,
		},
		{
			name:     "rfc 3339 and numeric zone",
			detail:   `{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"2026-11-23T09:00:00+01:00","endTime":"Mon, 23 Nov 2026 10:00:00 +0000",` + entities + `}`,
			wantKind: messages.ScheduledChangeKind, wantIDs: []string{"i-03c7e1b9a5d2f6840", "i-09f2d8a4c6e1b3750"}, wantStart: start, wantEnd: end,
		},
		{
			name:     "no window",
			detail:   `{"service":"EC2","eventTypeCategory":"scheduledChange",` + entities + `}`,
			wantKind: messages.ScheduledChangeKind, wantIDs: []string{"i-03c7e1b9a5d2f6840", "i-09f2d8a4c6e1b3750"},
		},
		{name: "another service", detail: `{"service":"RDS","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"demo-postgres"}]}`, wantKind: messages.NoOpKind},
		{name: "another category", detail: `{"service":"EC2","eventTypeCategory":"issue",` + entities + `}`, wantKind: messages.NoOpKind},
		{name: "closed", detail: `{"service":"EC2","eventTypeCategory":"scheduledChange","statusCode":"closed",` + entities + `}`, wantKind: messages.NoOpKind},
		{name: "no instance among entities", detail: `{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"h-0a1b2c3d4e5f60718"}]}`, wantKind: messages.NoOpKind},
		{name: "no entities", detail: `{"service":"EC2","eventTypeCategory":"scheduledChange"}`, wantKind: messages.NoOpKind},
		{name: "bad start time", detail: `{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"soon",` + entities + `}`, wantField: "detail.startTime"},
		{name: "bad end time", detail: `{"service":"EC2","eventTypeCategory":"scheduledChange","endTime":"2026-13-45",` + entities + `}`, wantField: "detail.endTime"},
		{name: "entities of wrong type", detail: `{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":"i-03c7e1b9a5d2f6840"}`, wantField: "detail.affectedEntities"},
		{name: "entity value of wrong type", detail: `{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":3}]}`, wantField: "detail.affectedEntities.entityValue"},
		{name: "service of wrong type", detail: `{"service":{"name":"EC2"}}`, wantField: "detail.service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := scheduledchange.Parse(env, json.RawMessage(tt.detail))
			if tt.wantField != "" {
				var m *messages.MalformedError
				require.True(t, errors.As(err, &m), "got %v", err)
				assert.Equal(t, tt.wantField, m.Field)
				assert.Equal(t, "e-1", m.EventID)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantKind, msg.Kind())
			if tt.wantKind == messages.NoOpKind {
				assert.Empty(t, msg.InstanceIDs())
				assert.NotEmpty(t, msg.(messages.NoOp).Reason)
				return
			}
			sc, ok := msg.(scheduledchange.Message)
			require.True(t, ok)
			assert.Equal(t, tt.wantIDs, sc.InstanceIDs())
			assert.Equal(t, tt.wantStart, sc.WindowStart)
			assert.Equal(t, tt.wantEnd, sc.WindowEnd)
			assert.True(t, sc.WindowStart.IsZero() || sc.WindowStart.Location() == time.UTC)
		})
	}
}
