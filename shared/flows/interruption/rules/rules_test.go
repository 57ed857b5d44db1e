package rules

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInterruptionRulePatterns(t *testing.T) {
	want := map[string]string{
		"SpotInterruption": `{"source":["aws.ec2"],"detail-type":["EC2 Spot Instance Interruption Warning"]}`,
		"Rebalance":        `{"source":["aws.ec2"],"detail-type":["EC2 Instance Rebalance Recommendation"]}`,
		"StateChange": `{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"],` +
			`"detail":{"state":["stopping","stopped","shutting-down","terminated"]}}`,
		"ScheduledChange": `{"source":["aws.health"],"detail-type":["AWS Health Event"],` +
			`"detail":{"service":["EC2"],"eventTypeCategory":["scheduledChange"]}}`,
		"CapacityReservationInterruption": `{"source":["aws.ec2"],"detail-type":["EC2 Capacity Reservation Instance Interruption Warning"]}`,
	}
	require.Len(t, Interruption, len(want))
	for _, r := range Interruption {
		got, err := json.Marshal(r.Pattern())
		require.NoError(t, err)
		assert.JSONEq(t, want[r.ID], string(got), r.ID)
		assert.NotEmpty(t, r.Description, r.ID)
	}
}
