package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestRecordLaunchFacts(t *testing.T) {
	t.Run("what EC2 says of the instance", func(t *testing.T) {
		labels := map[string]string{"team": "a"}
		c := state.Claim{Labels: labels}
		recordLaunchFacts(&c, instance.Instance{ImageID: "ami-1", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-1", "sg-2"},
			CapacityReservationID: "cr-1", InterruptibleReservation: true})
		assert.Equal(t, "ami-1", c.ImageID)
		assert.Equal(t, "subnet-a", c.SubnetID)
		assert.Equal(t, []string{"sg-1", "sg-2"}, c.SecurityGroupIDs)
		assert.Equal(t, map[string]string{"team": "a", scheduling.LabelCapacityReservationID: "cr-1",
			scheduling.LabelCapacityReservationInterrupt: "true"}, c.Labels)
		assert.Equal(t, map[string]string{"team": "a"}, labels, "the caller's labels are not changed")
	})
	t.Run("nothing known stays unknown", func(t *testing.T) {
		c := state.Claim{}
		recordLaunchFacts(&c, instance.Instance{})
		assert.Empty(t, c.ImageID)
		assert.Empty(t, c.SubnetID)
		assert.Nil(t, c.SecurityGroupIDs)
		assert.Nil(t, c.Labels, "no reservation, no label")
	})
}
