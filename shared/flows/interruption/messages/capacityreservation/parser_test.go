package capacityreservation_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/capacityreservation"
)

func TestParse(t *testing.T) {
	env := messages.Envelope{ID: "e-1", Time: time.Date(2026, 11, 20, 16, 40, 0, 0, time.UTC)}
	tests := []struct {
		name         string
		detail       string
		wantDeadline time.Time
		wantZone     string
		wantField    string
	}{
		{
			name:         "full",
			detail:       `{"instance-id":"i-0a6d4c8e2f1b93750","instance-action":"terminate","instance-termination-time":"2026-11-20T16:42:00Z","azId":"usw2-az2"}`,
			wantDeadline: time.Date(2026, 11, 20, 16, 42, 0, 0, time.UTC),
			wantZone:     "usw2-az2",
		},
		{
			name:         "offset time normalised to UTC",
			detail:       `{"instance-id":"i-0a6d4c8e2f1b93750","instance-termination-time":"2026-11-20T17:42:00+01:00"}`,
			wantDeadline: time.Date(2026, 11, 20, 16, 42, 0, 0, time.UTC),
		},
		{
			name:         "no termination time",
			detail:       `{"instance-id":"i-0a6d4c8e2f1b93750","instance-action":"terminate"}`,
			wantDeadline: time.Date(2026, 11, 20, 16, 42, 0, 0, time.UTC),
		},
		{name: "bad termination time", detail: `{"instance-id":"i-0a6d4c8e2f1b93750","instance-termination-time":"in two minutes"}`, wantField: "detail.instance-termination-time"},
		{name: "missing instance id", detail: `{"instance-action":"terminate"}`, wantField: "detail.instance-id"},
		{name: "zone of wrong type", detail: `{"instance-id":"i-0a6d4c8e2f1b93750","azId":2}`, wantField: "detail.azId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := capacityreservation.Parse(env, json.RawMessage(tt.detail))
			if tt.wantField != "" {
				var m *messages.MalformedError
				require.True(t, errors.As(err, &m), "got %v", err)
				assert.Equal(t, tt.wantField, m.Field)
				return
			}
			require.NoError(t, err)
			cr, ok := msg.(capacityreservation.Message)
			require.True(t, ok)
			assert.Equal(t, tt.wantDeadline, cr.Deadline())
			assert.Equal(t, tt.wantZone, cr.Detail.AvailabilityZoneID)
		})
	}
}
