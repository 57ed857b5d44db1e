package provisioning

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Report is what one provisioning run did, for the handler's log line and the tests.
type Report struct {
	// Lease is false when another run held the provisioner lease: this run did nothing, the other one
	// solves (triggers are coalesced).
	Lease bool
	// LeaseNotReleased is why the run could not give its lease back at the end (empty when it did): a
	// warning, not a failure — the lease ends by itself at the invocation's deadline (state.LeasedRun).
	LeaseNotReleased string
	// PendingPods counts the provisionable pods the run saw.
	PendingPods int
	// Buffers counts the CapacityBuffers the run read (gate CapacityBuffer), BufferPods the virtual pods
	// it planned for with the pending pods, and BufferStatusWrites the buffers whose status it wrote.
	Buffers, BufferPods, BufferStatusWrites int
	// InFlight counts the claims launched earlier whose nodes have not registered yet.
	InFlight int
	// Claims are the claims this run launched.
	Claims []LaunchedClaim
	// Unschedulable are the pods no NodePool can take.
	Unschedulable []UnschedulablePod
	// Skipped are launches the run left for the next run (deadline near, or a launch failed).
	Skipped []string
	// LaunchFailures are the claims whose launch failed (also in Errors).
	LaunchFailures []LaunchFailure
	// Static says, for each static NodePool the run launched for or could not fill, its count and what
	// was launched or held back (limits.nodes, a class backing off, no instance type that fits).
	Static []string
	// BackingOff are the EC2NodeClasses this run launched nothing for because their instances died at
	// launch (state.ClassBackoff: class, failures, last state reason, until when).
	BackingOff []string
	// MirrorsWritten counts the NodeClaim mirrors the run wrote for the claims it launched, MirrorsLeft
	// those it left to the lifecycle function (LaunchMirrors).
	MirrorsWritten, MirrorsLeft int
	// Errors are problems that did not stop the run: invalid configuration items, node classes that are
	// not ready, launches that failed.
	Errors []string
	// ReadDuration, SolveDuration and LaunchDuration are the run's three phases: reading the cluster,
	// the claims and the configuration; solving; launching (claims written, CreateFleet, claims updated).
	ReadDuration, SolveDuration, LaunchDuration time.Duration
	// Capacity is the capacity of Nodewright's Nodes, summed at most every CapacityEvery (nil otherwise).
	Capacity *Capacity
}

// LaunchedClaim is one claim launched by the run.
type LaunchedClaim struct {
	Name, NodePool, InstanceID, InstanceType, Zone, CapacityType string
	Price                                                        float64
	// Pods counts the pods the claim was launched for; BufferPods the CapacityBuffer virtual pods it
	// keeps room for besides.
	Pods, BufferPods int
	// PodUIDs are the pods the claim was launched for (kube-scheduler may still bind them elsewhere).
	PodUIDs []types.UID
}

// UnschedulablePod is a pod the scheduler could not place, with its reason.
type UnschedulablePod struct {
	Pod    string // namespace/name
	Reason string
}
