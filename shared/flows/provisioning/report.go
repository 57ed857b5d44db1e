package provisioning

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
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
	// NewlyPlaced counts the pending pods that the process's previous run did not see and this run placed,
	// on claims it launched or on capacity in flight: kube-scheduler is still marking a burst's pods.
	NewlyPlaced int
	// InFlight counts the claims launched earlier whose nodes have not registered yet.
	InFlight int
	// PlacedInFlight are the claims in flight on which the run placed pods that went pending since the
	// process's previous run, with those pods (each also told so by a Nominated Event, as Karpenter
	// nominates pods to NodeClaims in flight). Pods seen before are not repeated, so a burst's chained
	// runs list each pod once.
	PlacedInFlight []InFlightPlacement
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
	// Started is when the run began reading the cluster (after any quiet wait).
	Started time.Time
	// The run's phases, one after another: ReadDuration reads the cluster, the claims and the
	// configuration; PrepareDuration the catalog, prices, node classes and CapacityBuffers; SolveDuration
	// solves; LaunchDuration launches (claims written, CreateFleet, claims updated);
	// FinishDuration records the rest (events, unschedulable pods, buffer status, the snapshot mark, the
	// NodeClaim mirrors). A run with nothing pending ends after its read.
	ReadDuration, PrepareDuration, SolveDuration, LaunchDuration, FinishDuration time.Duration
	// nominations are the Nominated Events of the run's launches, published after it (afterRunJob).
	nominations []kube.Event
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

// InFlightPlacement is a claim in flight and the pending pods a run placed on it that the process's
// previous run had not seen: capacity was already on its way when they went pending.
type InFlightPlacement struct {
	Claim   string
	PodUIDs []types.UID
}

// UnschedulablePod is a pod the scheduler could not place, with its reason.
type UnschedulablePod struct {
	Pod    string // namespace/name
	Reason string
}

// RunTiming is when one run of an invocation started and how long its phases took (see Report).
type RunTiming struct {
	Started                                              time.Time
	Lease                                                bool
	Read, Prepare, Solve, Launch, Finish                 time.Duration
	PendingPods, NewlyPlaced, InFlight, Launched, Errors int
}

// timing is the run's RunTiming.
func (r Report) timing() RunTiming {
	return RunTiming{Started: r.Started, Lease: r.Lease, Read: r.ReadDuration, Prepare: r.PrepareDuration,
		Solve: r.SolveDuration, Launch: r.LaunchDuration, Finish: r.FinishDuration,
		PendingPods: r.PendingPods, NewlyPlaced: r.NewlyPlaced, InFlight: r.InFlight, Launched: len(r.Claims), Errors: len(r.Errors)}
}

// Total is the run's duration from its read to its end.
func (t RunTiming) Total() time.Duration { return t.Read + t.Prepare + t.Solve + t.Launch + t.Finish }

// Phases says how long each phase took, in milliseconds: "read 190 ms, prepared 90, solved 40, launched
// 300, finished 70".
func (t RunTiming) Phases() string {
	return fmt.Sprintf("read %d ms, prepared %d, solved %d, launched %d, finished %d", t.Read.Milliseconds(),
		t.Prepare.Milliseconds(), t.Solve.Milliseconds(), t.Launch.Milliseconds(), t.Finish.Milliseconds())
}
