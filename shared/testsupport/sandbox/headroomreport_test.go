package sandbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// The headroom scenario's report logic, without a sandbox: which pods count as bound to the buffer's
// room, which launches count against the scale-up, and when each target is met.

func TestBoundOnPriorNodesCountsOnlyPodsOnNodesThatExistedBefore(t *testing.T) {
	at := time.Unix(1000, 0)
	pods := []podTimes{
		{Name: "room-a", Bound: at, Node: "room"},
		{Name: "room-b", Bound: at, Node: "room"},
		{Name: "new-node", Bound: at, Node: "launched-for-it"},
		{Name: "unbound", Node: ""},
		{Name: "deleted", Bound: at, Node: "room", Deleted: at},
	}
	assert.Equal(t, 2, boundOnPriorNodes(pods, map[string]bool{"room": true, "static-1": true}))
	assert.Zero(t, boundOnPriorNodes(pods, map[string]bool{}))
}

func TestClassifyLaunchesTellsTheRefillFromLaunchesForPods(t *testing.T) {
	t0 := time.Unix(1000, 0)
	claims := map[string]provisioning.LaunchedClaim{
		"i-refill":  {Name: "default-a", NodePool: "default", BufferPods: 10},
		"i-mixed":   {Name: "default-b", NodePool: "default", Pods: 1, BufferPods: 9},
		"i-pods":    {Name: "default-c", NodePool: "default", Pods: 3},
		"i-refill2": {Name: "default-d", NodePool: "default", BufferPods: 2},
		"i-static":  {Name: "fixed-a", NodePool: "fixed"},
	}
	launches := []Launch{
		{Claim: "default-x", NodePool: "default", At: t0.Add(-time.Second), InstanceIDs: []string{"i-pods"}}, // before the window
		{Claim: "default-a", NodePool: "default", At: t0, InstanceIDs: []string{"i-refill"}},
		{Claim: "batch b1", NodePool: "default", At: t0.Add(time.Second), InstanceIDs: []string{"i-refill", "i-mixed"}},
		{Claim: "default-c", NodePool: "default", At: t0.Add(2 * time.Second), InstanceIDs: []string{"i-pods"}},
		{Claim: "default-u", NodePool: "default", At: t0.Add(3 * time.Second), InstanceIDs: []string{"i-unknown"}},
		{Claim: "default-f", NodePool: "default", At: t0.Add(4 * time.Second)}, // failed: no instance
		{Claim: "batch s1", NodePool: "fixed", At: t0.Add(5 * time.Second), InstanceIDs: []string{"i-static"}},
		{Claim: "default-d", NodePool: "default", At: t0.Add(10 * time.Second), InstanceIDs: []string{"i-refill2"}}, // after the window
	}
	got := classifyLaunches(launches, t0, t0.Add(5*time.Second), claims, "fixed")
	assert.Equal(t, launchKinds{Refill: 1, Static: 1, Other: 4}, got,
		"only a call whose every claim carries virtual pods alone is a refill; a mixed batch, pods, an unknown claim and a failed call are not")
	assert.Equal(t, launchKinds{Refill: 2, Static: 1, Other: 4}, classifyLaunches(launches, t0, time.Time{}, claims, "fixed"), "no end")

	assert.Equal(t, t0, firstLaunchAfter(launches, t0, claims, "fixed", true), "the first refill")
	assert.Equal(t, t0.Add(10*time.Second), firstLaunchAfter(launches, t0.Add(time.Second), claims, "fixed", true))
	assert.Equal(t, t0.Add(5*time.Second), firstLaunchAfter(launches, t0, nil, "fixed", false), "the static pool's first call")
	assert.True(t, firstLaunchAfter(launches, t0.Add(6*time.Second), nil, "fixed", false).IsZero(), "none after")
}

func TestHeadroomTargets(t *testing.T) {
	good := func() HeadroomReport {
		return HeadroomReport{ScaleUpPods: 10, BufferedPodsBoundWithoutLaunch: 10, RefillLaunchesDuringScaleUp: 1,
			BufferRefillLaunches: 1, BufferConditionAfterRefill: fitsExisting,
			StaticPoolReplicas: 2, StaticDeletedNode: "ip-10-0-0-7", StaticPoolNodesAfterDeletion: 2}
	}
	tests := []struct {
		name   string
		change func(*HeadroomReport)
		unmet  string // "" when every target is met
	}{
		{"every target met (a refill during the scale-up is not a launch for it)", func(*HeadroomReport) {}, ""},
		{"a pod bound on a node launched for it", func(r *HeadroomReport) { r.BufferedPodsBoundWithoutLaunch = 9 }, "bufferedPodsBoundWithoutLaunch=scaleUpPods"},
		{"no scale-up at all", func(r *HeadroomReport) { r.ScaleUpPods, r.BufferedPodsBoundWithoutLaunch = 0, 0 }, "bufferedPodsBoundWithoutLaunch=scaleUpPods"},
		{"a launch during the scale-up", func(r *HeadroomReport) { r.LaunchesDuringScaleUp = 1 }, "noLaunchForTheScaleUp"},
		{"a claim launched for a pod of the scale-up", func(r *HeadroomReport) { r.LaunchesForScaleUpPods = 1 }, "noLaunchForTheScaleUp"},
		{"no refill", func(r *HeadroomReport) { r.BufferRefillLaunches = 0 }, "bufferRefilled"},
		{"refill launched but its room not ready", func(r *HeadroomReport) { r.BufferConditionAfterRefill = "False/RequiresNewCapacity" }, "bufferRefilled"},
		{"the static pool short of a node", func(r *HeadroomReport) { r.StaticPoolNodesAfterDeletion = 1 }, "staticPoolNodesAfterDeletion=replicas"},
		{"the static pool over its replicas", func(r *HeadroomReport) { r.StaticPoolNodesAfterDeletion = 3 }, "staticPoolNodesAfterDeletion=replicas"},
		{"no node deleted", func(r *HeadroomReport) { r.StaticDeletedNode = "" }, "staticPoolNodesAfterDeletion=replicas"},
		{"a pod lost", func(r *HeadroomReport) { r.PodsLost = 1 }, "podsLost=0"},
		{"a leaked instance", func(r *HeadroomReport) { r.LeakedInstances = 1 }, "noLeakedInstances"},
		{"a claim without its instance", func(r *HeadroomReport) { r.Leaks = []string{"claim x has no running instance"} }, "noLeakedInstances"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good()
			tt.change(&r)
			r.setTargets()
			assert.Len(t, r.TargetsMet, 6)
			for target, met := range r.TargetsMet {
				assert.Equal(t, target != tt.unmet, met, target)
			}
			assert.Equal(t, tt.unmet == "", r.Worked())
		})
	}
	t.Run("a component error fails the run", func(t *testing.T) {
		r := good()
		r.Errors = []string{"provisioner: boom"}
		r.setTargets()
		assert.False(t, r.Worked())
	})
}
