package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
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

func TestLaunchStepsPutInterruptibleReservationsInAStepOfTheirOwn(t *testing.T) {
	p := plan()
	p.Reserved = []instance.Override{
		{InstanceType: "m5.large", Zone: "us-east-1a", ReservationID: "cr-icr", ReservationType: instance.ReservationTypeDefault, Interruptible: true},
		{InstanceType: "p5.48xlarge", Zone: "us-east-1a", ReservationID: "cr-block", ReservationType: instance.ReservationTypeCapacityBlock},
		{InstanceType: "m5.large", Zone: "us-east-1b", ReservationID: "cr-odcr", ReservationType: instance.ReservationTypeDefault},
	}
	steps := launchSteps(p)
	require.Len(t, steps, 5)
	var ids []string
	for _, st := range steps[:3] {
		require.Len(t, st.overrides, 1, "one fleet never mixes interruptible and other reservations")
		ids = append(ids, st.overrides[0].ReservationID)
	}
	assert.Equal(t, []string{"cr-odcr", "cr-block", "cr-icr"}, ids, "Karpenter's order: ODCRs, capacity blocks, interruptible ODCRs")
}
