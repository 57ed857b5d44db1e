package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/instance"
)

func TestLaunchStepsPutReservationsFirstOneTypeAtATime(t *testing.T) {
	p := plan()
	p.Reserved = []instance.Override{
		{InstanceType: "p5.48xlarge", Zone: "us-east-1a", ReservationID: "cr-block", ReservationType: instance.ReservationTypeCapacityBlock},
		{InstanceType: "m5.large", Zone: "us-east-1a", ReservationID: "cr-odcr", ReservationType: instance.ReservationTypeDefault},
	}
	steps := launchSteps(p)
	require.Len(t, steps, 4)
	assert.Equal(t, []string{"reserved", "reserved", "spot", "on-demand"},
		[]string{steps[0].capacityType, steps[1].capacityType, steps[2].capacityType, steps[3].capacityType})
	assert.Equal(t, "cr-odcr", steps[0].overrides[0].ReservationID, "ODCRs before capacity blocks")
	assert.Equal(t, "cr-block", steps[1].overrides[0].ReservationID)
	assert.Len(t, launchSteps(plan()), 2, "no reservation, no reserved step")
}
