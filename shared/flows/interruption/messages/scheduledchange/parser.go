package scheduledchange

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

// The event's source and detail-type, and the detail values we act on.
const (
	Source     = "aws.health"
	DetailType = "AWS Health Event"

	ServiceEC2              = "EC2"
	CategoryScheduledChange = "scheduledChange"
	StatusClosed            = "closed"
)

// timeLayouts are the formats Health times are read in: RFC 1123 with a zone name (what Health sends),
// with a numeric zone, and RFC 3339.
var timeLayouts = []string{time.RFC1123, time.RFC1123Z, time.RFC3339}

// Parse reads the detail of an AWS Health event. It returns a messages.NoOp for another service or
// category, a closed event, or one whose affected entities hold no instance id; a *MalformedError
// when a field has the wrong type or detail.startTime or detail.endTime cannot be read.
func Parse(env messages.Envelope, detail json.RawMessage) (messages.Message, error) {
	m := Message{Envelope: env}
	if err := messages.DecodeDetail(env, detail, &m.Detail); err != nil {
		return nil, err
	}
	d := m.Detail
	if d.Service != ServiceEC2 || d.EventTypeCategory != CategoryScheduledChange {
		return messages.NoOp{Envelope: env, Reason: "health event for service " + strconv.Quote(d.Service) +
			", category " + strconv.Quote(d.EventTypeCategory)}, nil
	}
	var err error
	if m.WindowStart, err = parseTime(env, "detail.startTime", d.StartTime); err != nil {
		return nil, err
	}
	if m.WindowEnd, err = parseTime(env, "detail.endTime", d.EndTime); err != nil {
		return nil, err
	}
	if d.StatusCode == StatusClosed {
		return messages.NoOp{Envelope: env, Reason: "scheduled change " + d.EventARN + " is closed"}, nil
	}
	if len(m.InstanceIDs()) == 0 {
		return messages.NoOp{Envelope: env, Reason: "scheduled change " + d.EventARN + " names no instance"}, nil
	}
	return m, nil
}

// parseTime reads a Health time; empty text gives the zero time.
func parseTime(env messages.Envelope, field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	var firstErr error
	for _, layout := range timeLayouts {
		at, err := time.Parse(layout, s)
		if err == nil {
			return at.UTC(), nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	reason := "not an RFC 1123 or RFC 3339 time: " + strconv.Quote(s)
	if len(s) > 64 {
		reason = "not an RFC 1123 or RFC 3339 time: " + strconv.Quote(s[:64]) + "…"
	}
	return time.Time{}, &messages.MalformedError{EventID: env.ID, Field: field, Reason: reason, Err: firstErr}
}
