package lifecycle

import (
	"maps"
	"slices"
	"strconv"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// recordLaunchFacts sets on a claim whose launch was not recorded (an adopted or rebuilt one) what EC2
// says its instance was launched with: the AMI, subnet and security groups, and the capacity reservation
// it runs in and whether it is interruptible, as the labels a recorded launch puts on the claim. Drift compares them with what the
// EC2NodeClass selects now; what EC2 did not say stays empty, which drift reads as unknown.
func recordLaunchFacts(c *state.Claim, inst instance.Instance) {
	c.ImageID, c.SubnetID = inst.ImageID, inst.SubnetID
	c.SecurityGroupIDs = slices.Clone(inst.SecurityGroupIDs)
	if inst.CapacityReservationID != "" {
		c.Labels = maps.Clone(c.Labels)
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels[scheduling.LabelCapacityReservationID] = inst.CapacityReservationID
		c.Labels[scheduling.LabelCapacityReservationInterrupt] = strconv.FormatBool(inst.InterruptibleReservation)
	}
}
