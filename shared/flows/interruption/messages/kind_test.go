package messages_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func TestKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range messages.Kinds() {
		assert.NotEmpty(t, k.String())
		assert.False(t, seen[k.String()], "kind %q listed twice", k)
		seen[k.String()] = true
	}
	assert.Equal(t, "spot_interrupted", messages.SpotInterruptionKind.String())
	assert.Equal(t, "no_op", messages.NoOpKind.String())
	assert.Len(t, seen, 7)
}
