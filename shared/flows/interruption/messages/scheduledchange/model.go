package scheduledchange

import (
	"time"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// Detail is the event's detail object. Times are kept as delivered; Message holds them parsed.
type Detail struct {
	EventARN          string             `json:"eventArn"`
	Service           string             `json:"service"`
	EventTypeCode     string             `json:"eventTypeCode"`
	EventTypeCategory string             `json:"eventTypeCategory"`
	EventScopeCode    string             `json:"eventScopeCode,omitempty"`
	CommunicationID   string             `json:"communicationId,omitempty"`
	StatusCode        string             `json:"statusCode,omitempty"`
	EventRegion       string             `json:"eventRegion,omitempty"`
	StartTime         string             `json:"startTime,omitempty"`
	EndTime           string             `json:"endTime,omitempty"`
	LastUpdatedTime   string             `json:"lastUpdatedTime,omitempty"`
	EventDescription  []EventDescription `json:"eventDescription,omitempty"`
	AffectedEntities  []AffectedEntity   `json:"affectedEntities"`
	AffectedAccount   string             `json:"affectedAccount,omitempty"`
}

// EventDescription is one language's text of the event.
type EventDescription struct {
	Language          string `json:"language"`
	LatestDescription string `json:"latestDescription"`
}

// AffectedEntity is one resource the event is about; for EC2 instance events the value is an instance id.
type AffectedEntity struct {
	EntityValue     string            `json:"entityValue"`
	Status          string            `json:"status,omitempty"`
	LastUpdatedTime string            `json:"lastUpdatedTime,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`
}

// Message is a parsed EC2 scheduled change.
type Message struct {
	messages.Envelope
	Detail Detail `json:"detail"`
	// WindowStart and WindowEnd are detail.startTime and detail.endTime in UTC, zero when absent.
	WindowStart time.Time `json:"-"`
	WindowEnd   time.Time `json:"-"`
}

var (
	_ messages.Message   = Message{}
	_ messages.Deadliner = Message{}
)

// Kind is ScheduledChangeKind.
func (Message) Kind() messages.Kind { return messages.ScheduledChangeKind }

// InstanceIDs returns the affected entities that are instance ids, first occurrence first, without
// duplicates. Other entities (dedicated hosts, volumes) are left out.
func (m Message) InstanceIDs() []string {
	ids := make([]string, 0, len(m.Detail.AffectedEntities))
	seen := make(map[string]bool, len(m.Detail.AffectedEntities))
	for _, e := range m.Detail.AffectedEntities {
		if messages.IsInstanceID(e.EntityValue) && !seen[e.EntityValue] {
			seen[e.EntityValue] = true
			ids = append(ids, e.EntityValue)
		}
	}
	return ids
}

// Deadline is the start of the change window, zero when the event has none.
func (m Message) Deadline() time.Time { return m.WindowStart }
