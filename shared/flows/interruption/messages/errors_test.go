package messages_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func TestMalformedError(t *testing.T) {
	cause := errors.New("unexpected end of JSON input")
	tests := []struct {
		name string
		err  *messages.MalformedError
		want string
	}{
		{
			name: "without event id",
			err:  &messages.MalformedError{Field: "body", Reason: "invalid JSON", Err: cause},
			want: "malformed interruption message: body: invalid JSON",
		},
		{
			name: "with event id",
			err:  messages.Malformed(messages.Envelope{ID: "e-1"}, "detail.instance-id", "missing"),
			want: "malformed interruption message e-1: detail.instance-id: missing",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
			wrapped := fmt.Errorf("parsing message m-1: %w", tt.err)
			assert.True(t, messages.IsMalformed(wrapped))
			assert.False(t, messages.IsUnknownKind(wrapped))
			assert.Equal(t, wrapped, messages.IgnoreUnknownKind(wrapped))
		})
	}
	assert.ErrorIs(t, &messages.MalformedError{Field: "body", Reason: "x", Err: cause}, cause)
}

func TestUnknownKindError(t *testing.T) {
	err := messages.UnknownKind(messages.Envelope{ID: "e-2", Source: "aws.ec2", DetailType: "EC2 AMI State Change", Version: "0"})
	assert.Equal(t, `unknown interruption message kind in event e-2: source "aws.ec2", detail-type "EC2 AMI State Change", version "0"`, err.Error())
	wrapped := fmt.Errorf("parsing message m-2: %w", err)
	assert.True(t, messages.IsUnknownKind(wrapped))
	assert.False(t, messages.IsMalformed(wrapped))
	assert.NoError(t, messages.IgnoreUnknownKind(wrapped))
	assert.False(t, messages.IsMalformed(nil))
	assert.False(t, messages.IsUnknownKind(nil))
}
