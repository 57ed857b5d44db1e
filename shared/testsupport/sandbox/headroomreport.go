package sandbox

import (
	"time"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// HeadroomReport is the headroom scenario's outcome.
type HeadroomReport struct {
	Scenario string `json:"scenario"`
	// BufferSize is the CapacityBuffer's replicas (chunks of BufferChunk each); ScaleUpPods the pods of
	// the scale-up that follows, as many.
	BufferSize  int    `json:"bufferSize"`
	BufferChunk string `json:"bufferChunk"`
	ScaleUpPods int    `json:"scaleUpPods"`
	// BufferRoomLaunches are the claims launched for the buffer's virtual pods before the scale-up;
	// BufferRoomReadyAfterSeconds the time from the buffer's creation until its room was on joined
	// Nodes (Provisioning True and no claim joining); BufferConditionBeforeScaleUp its Provisioning
	// condition then ("True/FitsExistingCapacity").
	BufferRoomLaunches           int     `json:"bufferRoomLaunches"`
	BufferRoomReadyAfterSeconds  float64 `json:"bufferRoomReadyAfterSeconds"`
	BufferConditionBeforeScaleUp string  `json:"bufferConditionBeforeScaleUp"`
	// BufferedPodsBoundWithoutLaunch counts the scale-up's pods kube-scheduler bound to Nodes that
	// existed before the scale-up; PodsMarkedUnschedulable those it marked Unschedulable first.
	BufferedPodsBoundWithoutLaunch int `json:"bufferedPodsBoundWithoutLaunch"`
	PodsMarkedUnschedulable        int `json:"podsMarkedUnschedulable"`
	// ScaleUpBoundAfterSeconds: from the scale-up to its last pod bound (-1: not all bound).
	ScaleUpBoundAfterSeconds float64 `json:"scaleUpBoundAfterSeconds"`
	// LaunchesDuringScaleUp counts the CreateFleet calls from the scale-up to its last pod bound, other
	// than the buffer's refill (RefillLaunchesDuringScaleUp: a run that sees the room taken may launch
	// it again before the last pod is bound). LaunchesForScaleUpPods counts the claims any run launched
	// for a pod of the scale-up, during it or after.
	LaunchesDuringScaleUp       int `json:"launchesDuringScaleUp"`
	RefillLaunchesDuringScaleUp int `json:"refillLaunchesDuringScaleUp"`
	LaunchesForScaleUpPods      int `json:"launchesForScaleUpPods"`
	// BufferRefillLaunches are the claims launched for the buffer's virtual pods after the scale-up took
	// its room; BufferRefilledAfterSeconds the time from the scale-up's last bound pod to the first
	// refill's CreateFleet (-1: none); BufferConditionAfterRefill the Provisioning condition once the
	// refill's Nodes joined.
	BufferRefillLaunches       int     `json:"bufferRefillLaunches"`
	BufferRefilledAfterSeconds float64 `json:"bufferRefilledAfterSeconds"`
	BufferConditionAfterRefill string  `json:"bufferConditionAfterRefill"`
	// StaticPool is the static NodePool, StaticPoolReplicas its spec.replicas; StaticPoolNodesBefore its
	// nodes (provisioning.CountStatic Active) before the deletion.
	StaticPool            string `json:"staticPool"`
	StaticPoolReplicas    int64  `json:"staticPoolReplicas"`
	StaticPoolNodesBefore int64  `json:"staticPoolNodesBefore"`
	// StaticDeletedNode and StaticDeletedInstance are the Node deleted and the instance terminated
	// (as a user or an Auto Scaling group would); StaticPoolLowestNodes the fewest Active claims seen
	// after; StaticReplacementLaunchedAfterSeconds the time to the pool's next CreateFleet (-1: none);
	// StaticRestoredAfterSeconds the time until the pool settled (-1: not within the timeout).
	StaticDeletedNode                     string  `json:"staticDeletedNode"`
	StaticDeletedInstance                 string  `json:"staticDeletedInstance"`
	StaticPoolLowestNodes                 int64   `json:"staticPoolLowestNodes"`
	StaticReplacementLaunchedAfterSeconds float64 `json:"staticReplacementLaunchedAfterSeconds"`
	StaticRestoredAfterSeconds            float64 `json:"staticRestoredAfterSeconds"`
	// StaticPoolNodesAfterDeletion is provisioning.CountStatic(claims, pool).Active once the pool
	// settled (every active claim initialized, none deleting) or the wait ended.
	StaticPoolNodesAfterDeletion int64 `json:"staticPoolNodesAfterDeletion"`
	// BackstopEverySeconds is the provisioner's backstop schedule in the scenario (deployed: 60): the
	// buffer's room and the static pool's count are kept by backstop runs, as no pod goes pending.
	BackstopEverySeconds float64 `json:"backstopEverySeconds"`
	// PodsRunning: the scale-up's pods running at the end; PodsLost: its pods not running then.
	PodsRunning     int      `json:"podsRunning"`
	PodsLost        int      `json:"podsLost"`
	LeakedInstances int      `json:"leakedInstances"`
	Leaks           []string `json:"leaks,omitempty"`
	DurationSeconds float64  `json:"durationSeconds"`
	Errors          []string `json:"errors,omitempty"`
	// Targets: every pod of the scale-up bound to the buffer's room with no launch for it, the room
	// launched again after, the static pool back at its replicas, no pod lost, nothing leaked.
	TargetsMet map[string]bool `json:"targetsMet"`
}

// Worked reports whether every target was met and no component failed.
func (r HeadroomReport) Worked() bool { return allMet(r.TargetsMet, r.Errors) }

// setTargets fills r.TargetsMet from the report's figures.
func (r *HeadroomReport) setTargets() {
	r.TargetsMet = map[string]bool{
		"bufferedPodsBoundWithoutLaunch=scaleUpPods": r.ScaleUpPods > 0 && r.BufferedPodsBoundWithoutLaunch == r.ScaleUpPods,
		"noLaunchForTheScaleUp":                      r.LaunchesDuringScaleUp == 0 && r.LaunchesForScaleUpPods == 0,
		"bufferRefilled":                             r.BufferRefillLaunches > 0 && r.BufferConditionAfterRefill == fitsExisting,
		"staticPoolNodesAfterDeletion=replicas":      r.StaticDeletedNode != "" && r.StaticPoolNodesAfterDeletion == r.StaticPoolReplicas,
		"podsLost=0":                                 r.PodsLost == 0,
		"noLeakedInstances":                          r.LeakedInstances == 0 && len(r.Leaks) == 0,
	}
}

// fitsExisting is a buffer's Provisioning condition when all its virtual pods fit existing capacity.
const fitsExisting = "True/FitsExistingCapacity"

// boundOnPriorNodes counts the pods (not deleted) bound to one of the Nodes in prior.
func boundOnPriorNodes(pods []podTimes, prior map[string]bool) int {
	n := 0
	for _, p := range pods {
		if p.Deleted.IsZero() && !p.Bound.IsZero() && prior[p.Node] {
			n++
		}
	}
	return n
}

// launchKinds counts CreateFleet calls by what their claims were launched for.
type launchKinds struct {
	// Refill calls launched only claims that carry virtual pods of a CapacityBuffer and no real pod;
	// Static calls launched claims of the static pool; Other calls anything else (pending pods, or a
	// call whose claims no provisioner run reported).
	Refill, Static, Other int
}

// classifyLaunches sorts the calls made in [from, to] (to zero: no end) by their claims (claims: every
// claim provisioner runs launched, by instance; static: the static NodePool's name). A failed call, with
// no instance, counts by its pool.
func classifyLaunches(launches []Launch, from, to time.Time, claims map[string]provisioning.LaunchedClaim, static string) launchKinds {
	var k launchKinds
	for _, l := range launches {
		if l.At.Before(from) || (!to.IsZero() && l.At.After(to)) {
			continue
		}
		if l.NodePool == static {
			k.Static++
			continue
		}
		refill := len(l.InstanceIDs) > 0
		for _, id := range l.InstanceIDs {
			c, ok := claims[id]
			refill = refill && ok && c.BufferPods > 0 && c.Pods == 0
		}
		if refill {
			k.Refill++
		} else {
			k.Other++
		}
	}
	return k
}

// firstLaunchAfter is the first call at or after from whose claims carry only buffer pods (refill true)
// or that belongs to pool (refill false); zero when none.
func firstLaunchAfter(launches []Launch, from time.Time, claims map[string]provisioning.LaunchedClaim, pool string, refill bool) time.Time {
	var first time.Time
	for _, l := range launches {
		if l.At.Before(from) || (!first.IsZero() && !l.At.Before(first)) {
			continue
		}
		if refill && classifyLaunches([]Launch{l}, from, time.Time{}, claims, pool).Refill == 1 ||
			!refill && l.NodePool == pool {
			first = l.At
		}
	}
	return first
}
