package messages

// Kind names what an interruption message asks of the handler. The values are Karpenter's, so metrics
// (nodeclaims_disrupted_total{reason=<kind>}) and logs read the same.
type Kind string

const (
	// SpotInterruptionKind: EC2 reclaims a spot instance in two minutes.
	SpotInterruptionKind Kind = "spot_interrupted"
	// RebalanceRecommendationKind: a spot instance is at elevated risk of interruption.
	RebalanceRecommendationKind Kind = "rebalance_recommendation"
	// ScheduledChangeKind: an AWS Health scheduled change (retirement, maintenance) for EC2 instances.
	ScheduledChangeKind Kind = "scheduled_change"
	// InstanceStoppedKind: an instance is stopping or stopped.
	InstanceStoppedKind Kind = "instance_stopped"
	// InstanceTerminatedKind: an instance is shutting down or terminated.
	InstanceTerminatedKind Kind = "instance_terminated"
	// CapacityReservationInterruptionKind: an instance in an interruptible capacity reservation is about
	// to be terminated because the owner reclaims the capacity.
	CapacityReservationInterruptionKind Kind = "capacity_reservation_interrupted"
	// NoOpKind: a well-formed event of a known kind that asks for nothing (a state change to pending or
	// running, a health event for another service).
	NoOpKind Kind = "no_op"
)

// Kinds lists every kind a parser can return, in a stable order.
func Kinds() []Kind {
	return []Kind{
		SpotInterruptionKind,
		RebalanceRecommendationKind,
		ScheduledChangeKind,
		InstanceStoppedKind,
		InstanceTerminatedKind,
		CapacityReservationInterruptionKind,
		NoOpKind,
	}
}

// String returns the kind's metric and log value.
func (k Kind) String() string { return string(k) }
