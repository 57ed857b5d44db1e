package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SupportedVersion is the EventBridge envelope version every parser reads.
const SupportedVersion = "0"

// Envelope is the part of an EventBridge event every kind shares. Its JSON tags are EventBridge's, so a
// kind's Message marshals back into an event that parses again (handy for fakes and the sandbox).
type Envelope struct {
	Version    string    `json:"version"`
	ID         string    `json:"id"`
	DetailType string    `json:"detail-type"`
	Source     string    `json:"source"`
	Account    string    `json:"account"`
	Time       time.Time `json:"time"`
	Region     string    `json:"region"`
	Resources  []string  `json:"resources"`
}

// EventID returns the EventBridge event id.
func (e Envelope) EventID() string { return e.ID }

// StartTime returns when AWS emitted the event.
func (e Envelope) StartTime() time.Time { return e.Time }

// wireEnvelope reads the envelope with the time as text, so a bad time is reported by field name, and
// the detail kept raw for the kind's parser.
type wireEnvelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// DecodeEnvelope reads an EventBridge event and returns its envelope and its raw detail, which is
// always a JSON object. It fails with a *MalformedError when the body is not a JSON object, when id,
// version, source, detail-type, time or detail is missing, when a field has the wrong type, or when
// time is not RFC 3339.
func DecodeEnvelope(body []byte) (Envelope, json.RawMessage, error) {
	var w wireEnvelope
	if err := json.Unmarshal(body, &w); err != nil {
		return Envelope{}, nil, decodeError(Envelope{ID: w.ID}, "", err)
	}
	env := Envelope{
		Version:    w.Version,
		ID:         w.ID,
		DetailType: w.DetailType,
		Source:     w.Source,
		Account:    w.Account,
		Region:     w.Region,
		Resources:  w.Resources,
	}
	for _, f := range []struct{ name, value string }{
		{"id", w.ID}, {"version", w.Version}, {"source", w.Source}, {"detail-type", w.DetailType}, {"time", w.Time},
	} {
		if f.value == "" {
			return Envelope{}, nil, Malformed(env, f.name, "missing")
		}
	}
	at, err := time.Parse(time.RFC3339, w.Time)
	if err != nil {
		return Envelope{}, nil, &MalformedError{EventID: env.ID, Field: "time", Reason: fmt.Sprintf("not an RFC 3339 time: %q", w.Time), Err: err}
	}
	env.Time = at.UTC()
	detail := bytes.TrimSpace(w.Detail)
	if len(detail) == 0 || bytes.Equal(detail, []byte("null")) {
		return Envelope{}, nil, Malformed(env, "detail", "missing")
	}
	if detail[0] != '{' {
		return Envelope{}, nil, Malformed(env, "detail", "not a JSON object")
	}
	return env, detail, nil
}

// DecodeDetail unmarshals a kind's raw detail into v, turning decoder errors into a *MalformedError
// that names the field ("detail.instance-id").
func DecodeDetail(env Envelope, detail json.RawMessage, v any) error {
	if err := json.Unmarshal(detail, v); err != nil {
		return decodeError(env, "detail", err)
	}
	return nil
}

// decodeError names the field a json error is about, under prefix.
func decodeError(env Envelope, prefix string, err error) *MalformedError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := join(prefix, typeErr.Field)
		if field == "" {
			field = "body"
		}
		return &MalformedError{EventID: env.ID, Field: field, Reason: fmt.Sprintf("want %s, got JSON %s", typeErr.Type, typeErr.Value), Err: err}
	}
	field := prefix
	if field == "" {
		field = "body"
	}
	return &MalformedError{EventID: env.ID, Field: field, Reason: "invalid JSON: " + err.Error(), Err: err}
}

func join(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	default:
		return prefix + "." + field
	}
}
