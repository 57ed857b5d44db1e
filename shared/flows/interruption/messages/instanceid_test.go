package messages_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func TestIsInstanceID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"i-0c4f8a2d61b7e9035", true},
		{"i-1a2b3c4d", true},
		{"", false},
		{"i-", false},
		{"i-0C4F8A2D61B7E9035", false},
		{"i-0c4f8a2d61b7e903", false},
		{"x-0c4f8a2d61b7e9035", false},
		{"i_0c4f8a2d61b7e9035", false},
		{"i-0c4f8a2d61b7e903g", false},
		{"arn:aws:ec2:us-west-2:210987654321:instance/i-0c4f8a2d61b7e9035", false},
		{"h-0c4f8a2d61b7e9035", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			assert.Equal(t, tt.want, messages.IsInstanceID(tt.id))
		})
	}
}

func TestRequireInstanceID(t *testing.T) {
	env := messages.Envelope{ID: "e-1"}
	assert.NoError(t, messages.RequireInstanceID(env, "detail.instance-id", "i-0c4f8a2d61b7e9035"))

	err := messages.RequireInstanceID(env, "detail.instance-id", "")
	require.Error(t, err)
	assert.Equal(t, "malformed interruption message e-1: detail.instance-id: missing", err.Error())

	err = messages.RequireInstanceID(env, "detail.instance-id", strings.Repeat("x", 100))
	require.Error(t, err)
	assert.True(t, messages.IsMalformed(err))
	assert.Contains(t, err.Error(), "not an EC2 instance id")
	assert.Less(t, len(err.Error()), 160, "long values are cut")
}
