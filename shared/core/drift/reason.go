package drift

// Reason is a kind of drift, named with the reason Karpenter puts on the NodeClaim's Drifted condition.
type Reason string

// The drift kinds, in the order they are checked (Karpenter's: static and requirement drift first, then
// whether the instance type is still offered, then the node class's static hash, its AMIs, security
// groups, subnets and capacity reservations). The first one that drifted is the claim's reason.
const (
	NodePoolDrifted          Reason = "NodePoolDrifted"
	RequirementsDrifted      Reason = "RequirementsDrifted"
	InstanceTypeNotFound     Reason = "InstanceTypeNotFound"
	NodeClassDrift           Reason = "NodeClassDrift"
	AMIDrift                 Reason = "AMIDrift"
	SecurityGroupDrift       Reason = "SecurityGroupDrift"
	SubnetDrift              Reason = "SubnetDrift"
	CapacityReservationDrift Reason = "CapacityReservationDrift"
)

// Reasons lists every kind in the order Detect checks them.
var Reasons = []Reason{NodePoolDrifted, RequirementsDrifted, InstanceTypeNotFound, NodeClassDrift, AMIDrift, SecurityGroupDrift,
	SubnetDrift, CapacityReservationDrift}
