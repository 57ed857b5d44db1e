package state

// Lifecycle is where a claim is in its life. Moves go forward only, except that a drain can be called off
// (draining → initialized) when its replacement could not be launched.
type Lifecycle string

const (
	Pending     Lifecycle = "pending"     // record written, EC2 not called or not answered yet
	Launched    Lifecycle = "launched"    // instance exists
	Registered  Lifecycle = "registered"  // a Node with the instance's providerID joined
	Initialized Lifecycle = "initialized" // Node Ready, startup taints gone, resources present
	Draining    Lifecycle = "draining"    // disrupted: tainted, pods being evicted
	Terminating Lifecycle = "terminating" // instance being terminated
	Deleted     Lifecycle = "deleted"     // instance and Node gone; the record expires later
)

var lifecycleMoves = map[Lifecycle][]Lifecycle{
	Pending:     {Launched, Terminating, Deleted},
	Launched:    {Registered, Draining, Terminating, Deleted},
	Registered:  {Initialized, Draining, Terminating, Deleted},
	Initialized: {Draining, Terminating, Deleted},
	Draining:    {Initialized, Terminating, Deleted},
	Terminating: {Deleted},
}

// CanMoveTo reports whether a claim may go from l to next.
func (l Lifecycle) CanMoveTo(next Lifecycle) bool {
	for _, m := range lifecycleMoves[l] {
		if m == next {
			return true
		}
	}
	return false
}

// InService reports whether the claim is not on its way out yet (not draining, terminating or deleted).
func (l Lifecycle) InService() bool {
	switch l {
	case Pending, Launched, Registered, Initialized:
		return true
	}
	return false
}

// Live reports whether the claim still stands for capacity (launched or about to be).
func (l Lifecycle) Live() bool {
	switch l {
	case Pending, Launched, Registered, Initialized, Draining:
		return true
	}
	return false
}
