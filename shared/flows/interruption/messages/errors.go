package messages

import (
	"errors"
	"fmt"
)

// MalformedError says a message body is not a well-formed event: invalid JSON, a required field missing,
// a field of the wrong type or format. Retrying the same body gives the same error, so the handler logs
// it once and acknowledges the message.
type MalformedError struct {
	// EventID is the envelope's id when it could be read, else empty.
	EventID string
	// Field is the JSON path of the offending field ("id", "detail.instance-id"), or "body" when the
	// body as a whole is unreadable.
	Field string
	// Reason says what is wrong with the field, in a few words.
	Reason string
	// Err is the decoder's error when there is one.
	Err error
}

func (e *MalformedError) Error() string {
	if e.EventID == "" {
		return fmt.Sprintf("malformed interruption message: %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("malformed interruption message %s: %s: %s", e.EventID, e.Field, e.Reason)
}

func (e *MalformedError) Unwrap() error { return e.Err }

// Malformed builds a MalformedError for the event in env.
func Malformed(env Envelope, field, reason string) *MalformedError {
	return &MalformedError{EventID: env.ID, Field: field, Reason: reason}
}

// IsMalformed reports whether err is or wraps a *MalformedError.
func IsMalformed(err error) bool {
	var m *MalformedError
	return errors.As(err, &m)
}

// UnknownKindError says a well-formed event has a source, detail-type or version no parser handles,
// for example an EventBridge rule that matches more than we read. The handler acknowledges it with a
// log line.
type UnknownKindError struct {
	EventID    string
	Source     string
	DetailType string
	Version    string
}

func (e *UnknownKindError) Error() string {
	return fmt.Sprintf("unknown interruption message kind in event %s: source %q, detail-type %q, version %q",
		e.EventID, e.Source, e.DetailType, e.Version)
}

// UnknownKind builds an UnknownKindError for the event in env.
func UnknownKind(env Envelope) *UnknownKindError {
	return &UnknownKindError{EventID: env.ID, Source: env.Source, DetailType: env.DetailType, Version: env.Version}
}

// IsUnknownKind reports whether err is or wraps an *UnknownKindError.
func IsUnknownKind(err error) bool {
	var u *UnknownKindError
	return errors.As(err, &u)
}

// IgnoreUnknownKind returns nil for an unknown-kind error and err otherwise.
func IgnoreUnknownKind(err error) error {
	if IsUnknownKind(err) {
		return nil
	}
	return err
}
