package nodeclass

import (
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// Timing of a capacity block's end. EC2 sends its expiration warning 40 minutes before a block ends and
// starts terminating the block's instances 10 minutes later; Karpenter deletes the block's nodes at the
// warning, so their pods move while the instances still run, and stops launching into the block then.
const (
	// CapacityBlockDrainLead is how long before a capacity block's end its nodes are drained and it
	// takes no new launch.
	CapacityBlockDrainLead = 40 * time.Minute
	// CapacityBlockReclaimLead is how long before a capacity block's end EC2 starts terminating its
	// instances: every pod must be off by then.
	CapacityBlockReclaimLead = 30 * time.Minute
)

// Reservation states in a resolution's status, as Karpenter reports them: a capacity block within
// CapacityBlockDrainLead of its end is expiring (no offering, its nodes drain); every other usable
// reservation is active.
const (
	ReservationStateActive   = "active"
	ReservationStateExpiring = "expiring"
)

// ReservationTypeCapacityBlock is EC2's reservation type of a capacity block (the other is "default").
const ReservationTypeCapacityBlock = string(ec2types.CapacityReservationTypeCapacityBlock)

// BlockEnding reports whether a reservation of type rtype ending at end is a capacity block whose drain
// is due at now: from CapacityBlockDrainLead before its end on, and at once when the end has passed. A
// reservation without an end, or of another type, never is.
func BlockEnding(rtype string, end *time.Time, now time.Time) bool {
	return rtype == ReservationTypeCapacityBlock && end != nil && !now.Before(end.Add(-CapacityBlockDrainLead))
}

// BlockReclaimedAt is when EC2 starts terminating the instances of a capacity block ending at end.
func BlockReclaimedAt(end time.Time) time.Time { return end.Add(-CapacityBlockReclaimLead) }
