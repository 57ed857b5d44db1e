package statechange_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages/statechange"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		state string
		want  messages.Kind
	}{
		{statechange.StateStopping, messages.InstanceStoppedKind},
		{statechange.StateStopped, messages.InstanceStoppedKind},
		{statechange.StateShuttingDown, messages.InstanceTerminatedKind},
		{statechange.StateTerminated, messages.InstanceTerminatedKind},
		{"Terminated", messages.InstanceTerminatedKind},
		{statechange.StatePending, messages.NoOpKind},
		{statechange.StateRunning, messages.NoOpKind},
		{"rebooting", messages.NoOpKind},
		{"", messages.NoOpKind},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			assert.Equal(t, tt.want, statechange.KindOf(tt.state))
			m := statechange.Message{Detail: statechange.Detail{InstanceID: "i-0b8e3f1a92c4d7605", State: tt.state}}
			assert.Equal(t, tt.want, m.Kind())
			assert.Equal(t, []string{"i-0b8e3f1a92c4d7605"}, m.InstanceIDs())
		})
	}
}
