package scheduledchange_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/scheduledchange"
)

// FuzzParse feeds arbitrary details to the health parser, the one with the most fields and formats.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"service":"EC2","eventTypeCategory":"scheduledChange","statusCode":"upcoming","startTime":"Mon, 23 Nov 2026 08:00:00 GMT","endTime":"Mon, 23 Nov 2026 10:00:00 GMT","affectedEntities":[{"entityValue":"i-03c7e1b9a5d2f6840"},{"entityValue":"i-03c7e1b9a5d2f6840"}]}`))
	f.Add([]byte(`{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"2026-11-23T09:00:00+01:00","affectedEntities":[{"entityValue":"h-0a1b2c3d4e5f60718"}]}`))
	f.Add([]byte(`{"service":"RDS","eventTypeCategory":"scheduledChange"}`))
	f.Add([]byte(`{"affectedEntities":[{"entityValue":3}]}`))
	env := messages.Envelope{ID: "e-1", Time: time.Date(2026, 11, 6, 9, 15, 30, 0, time.UTC)}
	f.Fuzz(func(t *testing.T, detail []byte) {
		if !json.Valid(detail) {
			return // the envelope decoder only ever passes valid JSON
		}
		msg, err := scheduledchange.Parse(env, detail)
		if err != nil {
			if msg != nil || !messages.IsMalformed(err) {
				t.Fatalf("message %v with error %v", msg, err)
			}
			return
		}
		switch m := msg.(type) {
		case messages.NoOp:
			if m.Reason == "" {
				t.Fatal("no-op without a reason")
			}
		case scheduledchange.Message:
			ids := m.InstanceIDs()
			if len(ids) == 0 {
				t.Fatal("scheduled change names no instance")
			}
			for _, id := range ids {
				if !messages.IsInstanceID(id) {
					t.Fatalf("bad instance id %q", id)
				}
			}
			for _, at := range []time.Time{m.WindowStart, m.WindowEnd} {
				if !at.IsZero() && at.Location() != time.UTC {
					t.Fatalf("window time %v not in UTC", at)
				}
			}
		default:
			t.Fatalf("unexpected message type %T", msg)
		}
	})
}
