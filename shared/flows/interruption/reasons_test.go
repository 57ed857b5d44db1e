package interruption_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/interruption/messages"
)

func TestParseRebalancePolicy(t *testing.T) {
	for in, want := range map[string]interruption.RebalancePolicy{"": interruption.RebalanceEventOnly,
		"event": interruption.RebalanceEventOnly, "replace": interruption.RebalanceReplace} {
		got, err := interruption.ParseRebalancePolicy(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := interruption.ParseRebalancePolicy("Replace")
	assert.EqualError(t, err, `rebalance policy "Replace": must be "event" or "replace"`)
}

func TestReasonsNameEveryKind(t *testing.T) {
	want := map[messages.Kind][2]string{
		messages.SpotInterruptionKind:                {"SpotInterruption", string(kube.ReasonSpotInterrupted)},
		messages.RebalanceRecommendationKind:         {"RebalanceRecommendation", string(kube.ReasonSpotRebalanceRecommendation)},
		messages.ScheduledChangeKind:                 {"ScheduledChange", string(kube.ReasonInstanceUnhealthy)},
		messages.InstanceStoppedKind:                 {"InstanceStopped", string(kube.ReasonInstanceStopping)},
		messages.InstanceTerminatedKind:              {"InstanceTerminated", string(kube.ReasonInstanceTerminating)},
		messages.CapacityReservationInterruptionKind: {"CapacityReservationInterruption", string(kube.ReasonCapacityReservationInstanceInterrupted)},
	}
	for _, k := range messages.Kinds() {
		if k == messages.NoOpKind {
			continue
		}
		w, ok := want[k]
		require.True(t, ok, "kind %s has no expected reasons", k)
		assert.Equal(t, w[0], interruption.DisruptionReason(k), k)
		assert.Equal(t, w[1], string(interruption.EventReason(k)), k)
	}
	assert.Equal(t, "interruption-e-1-default-abcde", interruption.ReplacementDeduplicationID("e-1", "default-abcde"))
}
