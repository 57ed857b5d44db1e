package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// recEvents records the Events published, as "<kind>/<name> <reason>: <message>".
type recEvents struct {
	mu     sync.Mutex
	events []kube.Event
}

func (r *recEvents) Publish(_ context.Context, e kube.Event) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return true, nil
}

// on returns the reasons of the Events published on the object of kind and name.
func (r *recEvents) on(kind, name string) []kube.Reason {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []kube.Reason
	for _, e := range r.events {
		if e.Object.Kind == kind && e.Object.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// impairedChecks is a fixed answer of the impaired status checks; calls counts the reads.
type impairedChecks struct {
	list  []instance.Impaired
	err   error
	calls int
}

func (f *impairedChecks) Impaired(context.Context) ([]instance.Impaired, error) {
	f.calls++
	return f.list, f.err
}

// repairRig is one runner (its memory kept between passes) over fakes, with node repair on unless gateOff.
type repairRig struct {
	store  *hookStore
	nodes  listedNodes
	writer *recWriter
	queue  *queue
	events *recEvents
	health *impairedChecks
	insts  listedInstances
	now    time.Time
	runner *Runner
}

func newRepairRig(t *testing.T, gate bool, claims ...state.Claim) *repairRig {
	t.Helper()
	s := settings.Default()
	s.FeatureGates.NodeRepair = gate
	item, err := state.SettingsItem(s)
	require.NoError(t, err)
	r := &repairRig{store: &hookStore{fakeStore: fakeStore{claims: claims}, config: append(configItems(), item)},
		writer: &recWriter{}, queue: &queue{}, events: &recEvents{}, health: &impairedChecks{}, now: testNow,
		insts: listedInstances{list: tagged(claims...)}}
	r.runner = NewRunner(RunnerConfig{}, RunnerDeps{Store: r.store, Nodes: &r.nodes, NodeActions: r.writer,
		Instances: &r.insts, Terminations: r.queue, Events: r.events, Health: r.health, Now: func() time.Time { return r.now }})
	return r
}

func (r *repairRig) run(t *testing.T) RunReport {
	t.Helper()
	rep, err := r.runner.Run(context.Background(), fmt.Sprintf("run-%d", r.now.Unix()))
	require.NoError(t, err)
	return rep
}

// sickNode is claim c's Node (initialized, NodePool default) with condition typ in status since ago
// before testNow; Ready=True unless typ is Ready.
func sickNode(c state.Claim, typ corev1.NodeConditionType, status corev1.ConditionStatus, ago time.Duration) *corev1.Node {
	n := ourNode(c.NodeName, c.InstanceID, false)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(testNow.Add(-48 * time.Hour))}}
	cond := corev1.NodeCondition{Type: typ, Status: status, LastTransitionTime: metav1.NewTime(testNow.Add(-ago))}
	if typ == corev1.NodeReady {
		n.Status.Conditions[0] = cond
	} else {
		n.Status.Conditions = append(n.Status.Conditions, cond)
	}
	return n
}

// healthyClaims are n initialized claims of NodePool default, named default-h<i>, with their Ready Nodes.
func healthyClaims(n int) ([]state.Claim, listedNodes) {
	var claims []state.Claim
	var nodes listedNodes
	for i := range n {
		c := claimOn(fmt.Sprintf("default-h%d", i), "default", state.Initialized, fmt.Sprintf("i-0h%d", i), fmt.Sprintf("ip-h%d", i))
		claims = append(claims, c)
		nodes = append(nodes, ourNode(c.NodeName, c.InstanceID, false))
	}
	return claims, nodes
}

func TestUnhealthyOfFollowsKarpentersRepairPolicies(t *testing.T) {
	c := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	for _, tc := range []struct {
		typ        corev1.NodeConditionType
		status     corev1.ConditionStatus
		toleration time.Duration
	}{
		{corev1.NodeReady, corev1.ConditionFalse, 30 * time.Minute},
		{corev1.NodeReady, corev1.ConditionUnknown, 30 * time.Minute},
		{"AcceleratedHardwareReady", corev1.ConditionFalse, 10 * time.Minute},
		{"StorageReady", corev1.ConditionFalse, 30 * time.Minute},
		{"NetworkingReady", corev1.ConditionFalse, 30 * time.Minute},
		{"KernelReady", corev1.ConditionFalse, 30 * time.Minute},
		{"ContainerRuntimeReady", corev1.ConditionFalse, 30 * time.Minute},
	} {
		name := fmt.Sprintf("%s=%s", tc.typ, tc.status)
		got, ok := unhealthyOf(sickNode(c, tc.typ, tc.status, time.Minute), nil, testNow)
		require.True(t, ok, name)
		assert.Equal(t, string(tc.typ), got.Type, name)
		assert.Equal(t, tc.toleration, got.Toleration, name)
		assert.False(t, repairDue(got, testNow.Add(tc.toleration-time.Minute-time.Second)), "%s: a second before its toleration", name)
		assert.True(t, repairDue(got, testNow.Add(tc.toleration-time.Minute)), "%s: at its toleration", name)
	}
	for _, fine := range []*corev1.Node{
		ourNode("ip-a", "i-0a", false),                                // Ready=True
		sickNode(c, "AcceleratedHardwareReady", "Unknown", time.Hour), // only False counts
		sickNode(c, "DiskPressure", corev1.ConditionTrue, time.Hour),  // not a repair policy
	} {
		_, ok := unhealthyOf(fine, nil, testNow)
		assert.False(t, ok, "%v", fine.Status.Conditions)
	}

	// Of several, the one whose toleration ends first decides (Ready=False 25 m ago ends before
	// AcceleratedHardwareReady=False 1 m ago).
	n := sickNode(c, corev1.NodeReady, corev1.ConditionFalse, 25*time.Minute)
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: "AcceleratedHardwareReady", Status: corev1.ConditionFalse,
		LastTransitionTime: metav1.NewTime(testNow.Add(-time.Minute))})
	got, ok := unhealthyOf(n, nil, testNow)
	require.True(t, ok)
	assert.Equal(t, "Ready", got.Type)
	imp := state.UnhealthyCondition{Type: instance.CheckSystemStatus, Status: "impaired", Since: testNow.Add(-time.Minute), Toleration: ImpairedToleration}
	got, ok = unhealthyOf(n, []state.UnhealthyCondition{imp}, testNow)
	require.True(t, ok)
	assert.Equal(t, imp, got, "an impaired status check tolerated for 2 minutes ends first")

	// A condition with no transition time is unhealthy but dated now: never repaired on a guess.
	n = sickNode(c, corev1.NodeReady, corev1.ConditionUnknown, 0)
	n.Status.Conditions[0].LastTransitionTime = metav1.Time{}
	got, ok = unhealthyOf(n, nil, testNow)
	require.True(t, ok)
	assert.False(t, repairDue(got, testNow))
}

func TestAllowedUnhealthyRoundsUp(t *testing.T) {
	for total, want := range map[int]int{0: 0, 1: 1, 3: 1, 5: 1, 6: 2, 10: 2, 11: 3, 5000: 1000} {
		assert.Equal(t, want, allowedUnhealthy(total), "%d nodes", total)
	}
}

// A Node Ready=False for 29 minutes is left; at 31 minutes its claim gets node repair's disruption
// request (reason Unhealthy) and a decision, and nothing else: no Node write, no termination request.
func TestReadyFalseIsRepairedAfterItsToleration(t *testing.T) {
	claims, nodes := healthyClaims(4)
	sick := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	sick.CapacityType = "spot"
	r := newRepairRig(t, true, append(claims, sick)...)
	r.nodes = append(nodes, sickNode(sick, corev1.NodeReady, corev1.ConditionFalse, 29*time.Minute))

	rep := r.run(t)
	assert.Empty(t, rep.Repairs, rep.String())
	assert.Nil(t, r.store.claim(t, "default-a").DisruptionRequest)

	r.now = testNow.Add(2 * time.Minute)
	rep = r.run(t)
	require.Len(t, rep.Repairs, 1, rep.String())
	assert.Equal(t, Repair{NodePool: "default", Node: "ip-a", Claim: "default-a", CapacityType: "spot", Condition: "ready"}, rep.Repairs[0])
	req := r.store.claim(t, "default-a").DisruptionRequest
	require.NotNil(t, req)
	assert.Equal(t, state.RepairRequester, req.By)
	assert.Equal(t, "Ready=False for 31m0s (tolerated for 30m0s)", req.Reason)
	require.NotNil(t, req.Unhealthy)
	assert.Equal(t, state.UnhealthyCondition{Type: "Ready", Status: "False", Since: testNow.Add(-29 * time.Minute), Toleration: 30 * time.Minute},
		*req.Unhealthy)
	assert.Equal(t, []string{"NodeRepair/Unhealthy"}, r.store.decisionsOf("nodeclaim/default-a"))
	assert.Equal(t, []string{"NodeRepair/Unhealthy"}, r.store.decisionsOf("node/ip-a"))
	assert.Empty(t, r.queue.sent, "the disruption run acts on the request: replacement first")
	assert.Empty(t, r.writer.calls)
	assert.Empty(t, r.events.on("Node", "ip-a"))

	r.now = testNow.Add(3 * time.Minute)
	rep = r.run(t)
	assert.Empty(t, rep.Repairs, "requested once: %s", rep)
}

func TestEachRepairPolicyWaitsForItsOwnToleration(t *testing.T) {
	for _, tc := range []struct {
		typ    corev1.NodeConditionType
		status corev1.ConditionStatus
		ago    time.Duration
		want   bool
	}{
		{corev1.NodeReady, corev1.ConditionUnknown, 29 * time.Minute, false},
		{corev1.NodeReady, corev1.ConditionUnknown, 31 * time.Minute, true},
		{"AcceleratedHardwareReady", corev1.ConditionFalse, 9 * time.Minute, false},
		{"AcceleratedHardwareReady", corev1.ConditionFalse, 11 * time.Minute, true},
		{"KernelReady", corev1.ConditionFalse, 11 * time.Minute, false},
		{"ContainerRuntimeReady", corev1.ConditionFalse, 31 * time.Minute, true},
	} {
		name := fmt.Sprintf("%s=%s for %s", tc.typ, tc.status, tc.ago)
		t.Run(name, func(t *testing.T) {
			claims, nodes := healthyClaims(4)
			sick := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
			r := newRepairRig(t, true, append(claims, sick)...)
			r.nodes = append(nodes, sickNode(sick, tc.typ, tc.status, tc.ago))
			rep := r.run(t)
			if !tc.want {
				assert.Empty(t, rep.Repairs, rep.String())
				return
			}
			require.Len(t, rep.Repairs, 1, rep.String())
			assert.Equal(t, snakeCase(string(tc.typ)), rep.Repairs[0].Condition)
			assert.Equal(t, string(tc.typ), r.store.claim(t, "default-a").DisruptionRequest.Unhealthy.Type)
		})
	}
}

func TestNodeRepairGateOffDoesNothing(t *testing.T) {
	sick := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	r := newRepairRig(t, false, sick)
	r.nodes = listedNodes{sickNode(sick, corev1.NodeReady, corev1.ConditionFalse, 5*time.Hour)}
	r.health.list = []instance.Impaired{{InstanceID: "i-0a", Check: instance.CheckInstanceStatus, Since: testNow.Add(-time.Hour)}}
	rep := r.run(t)
	assert.Empty(t, rep.Repairs)
	assert.Empty(t, rep.RepairBlocked)
	assert.Nil(t, r.store.claim(t, "default-a").DisruptionRequest)
	assert.Zero(t, r.health.calls, "no status checks read with the gate off")
	assert.Empty(t, r.events.events)
}

// More than 20% (rounded up) of a NodePool unhealthy holds every repair of the pool, with a
// NodeRepairBlocked Event on the due Nodes and the NodePool and a decision; nodes still within their
// toleration count as unhealthy too, as in Karpenter.
func TestNodeRepairIsBlockedWhenTooManyOfThePoolAreUnhealthy(t *testing.T) {
	claims, nodes := healthyClaims(3)
	a := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	b := claimOn("default-b", "default", state.Initialized, "i-0b", "ip-b")
	r := newRepairRig(t, true, append(claims, a, b)...)
	// 2 of 5 unhealthy: at most 1 (20% of 5) may be.
	r.nodes = append(nodes, sickNode(a, corev1.NodeReady, corev1.ConditionFalse, time.Hour),
		sickNode(b, corev1.NodeReady, corev1.ConditionUnknown, time.Minute))

	rep := r.run(t)
	assert.Empty(t, rep.Repairs, rep.String())
	assert.Equal(t, []string{"default"}, rep.RepairBlocked)
	assert.Nil(t, r.store.claim(t, "default-a").DisruptionRequest)
	assert.Equal(t, []kube.Reason{kube.ReasonNodeRepairBlocked}, r.events.on("Node", "ip-a"))
	assert.Empty(t, r.events.on("Node", "ip-b"), "not due yet: it only counts")
	assert.Equal(t, []kube.Reason{kube.ReasonNodeRepairBlocked}, r.events.on("NodePool", "default"))
	require.NotEmpty(t, r.events.events)
	assert.Equal(t, corev1.EventTypeWarning, r.events.events[0].Type)
	assert.Contains(t, r.events.events[0].Message, "more than 20% of the nodes of NodePool default are unhealthy (2 of 5")
	assert.Equal(t, []string{"NodeRepairBlocked/NodeRepairBlocked"}, r.store.decisionsOf("node/ip-a"))

	r.now = testNow.Add(time.Minute)
	r.run(t)
	assert.Len(t, r.store.decisionsOf("node/ip-a"), 1, "a blocked pool's decision is recorded every 5 minutes, not every sweep")

	// b recovers: 1 of 5 is within the guard, and a is repaired.
	r.nodes[len(r.nodes)-1] = ourNode("ip-b", "i-0b", false)
	r.now = testNow.Add(2 * time.Minute)
	rep = r.run(t)
	require.Len(t, rep.Repairs, 1, rep.String())
	assert.Equal(t, "default-a", rep.Repairs[0].Claim)
	assert.Empty(t, rep.RepairBlocked)
}

// A pool of three may have one unhealthy node (20% of 3, rounded up): it is repaired.
func TestOneUnhealthyNodeOfThreeIsRepaired(t *testing.T) {
	claims, nodes := healthyClaims(2)
	a := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	r := newRepairRig(t, true, append(claims, a)...)
	r.nodes = append(nodes, sickNode(a, corev1.NodeReady, corev1.ConditionFalse, time.Hour))
	rep := r.run(t)
	require.Len(t, rep.Repairs, 1, rep.String())
	assert.Empty(t, r.events.events)
}

// Impaired EC2 status checks count: dated from EC2's ImpairedSince, or from when they were first seen.
// Instances that are not the cluster's are never counted.
func TestImpairedStatusChecksAreRepaired(t *testing.T) {
	claims, nodes := healthyClaims(8)
	a := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	b := claimOn("default-b", "default", state.Initialized, "i-0b", "ip-b")
	r := newRepairRig(t, true, append(claims, a, b)...)
	r.nodes = append(nodes, ourNode("ip-a", "i-0a", false), ourNode("ip-b", "i-0b", false))
	r.health.list = []instance.Impaired{
		{InstanceID: "i-0a", Check: instance.CheckSystemStatus, Since: testNow.Add(-3 * time.Minute)},
		{InstanceID: "i-0b", Check: instance.CheckInstanceStatus}, // no ImpairedSince: from its first sighting
		{InstanceID: "i-0other1", Check: instance.CheckInstanceStatus, Since: testNow.Add(-time.Hour)},
		{InstanceID: "i-0other2", Check: instance.CheckInstanceStatus, Since: testNow.Add(-time.Hour)},
		{InstanceID: "i-0other3", Check: instance.CheckInstanceStatus, Since: testNow.Add(-time.Hour)},
	}

	rep := r.run(t)
	require.Len(t, rep.Repairs, 1, rep.String())
	assert.Equal(t, Repair{NodePool: "default", Node: "ip-a", Claim: "default-a", Condition: "system_status"}, rep.Repairs[0])
	u := r.store.claim(t, "default-a").DisruptionRequest.Unhealthy
	assert.Equal(t, state.UnhealthyCondition{Type: "SystemStatus", Status: "impaired", Since: testNow.Add(-3 * time.Minute),
		Toleration: ImpairedToleration}, *u)
	assert.Empty(t, rep.RepairBlocked, "2 of 10 unhealthy, the other instances are not ours")
	assert.Equal(t, 1, r.health.calls, "one read per sweep")

	r.now = testNow.Add(ImpairedToleration - time.Second)
	rep = r.run(t)
	assert.Empty(t, rep.Repairs, "i-0b seen impaired for less than 2 minutes: %s", rep)
	r.now = testNow.Add(ImpairedToleration)
	rep = r.run(t)
	require.Len(t, rep.Repairs, 1, rep.String())
	assert.Equal(t, "default-b", rep.Repairs[0].Claim)
	assert.Equal(t, testNow, r.store.claim(t, "default-b").DisruptionRequest.Unhealthy.Since)
}

// A failed status check read leaves the Node conditions to decide alone.
func TestStatusCheckReadFailureStillRepairsByConditions(t *testing.T) {
	claims, nodes := healthyClaims(4)
	a := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	r := newRepairRig(t, true, append(claims, a)...)
	r.nodes = append(nodes, sickNode(a, corev1.NodeReady, corev1.ConditionFalse, time.Hour))
	r.health.err = fmt.Errorf("UnauthorizedOperation")
	rep := r.run(t)
	require.Len(t, rep.Repairs, 1, rep.String())
	assert.Contains(t, fmt.Sprint(rep.Errors), "instance-status: node repair reads no status checks this sweep")
}

// Only an in-service claim whose instance runs and that has no request yet is asked; a draining claim's
// unhealthy node still counts in the guard.
func TestNodeRepairLeavesClaimsAlreadyOnTheirWay(t *testing.T) {
	claims, nodes := healthyClaims(10)
	asked := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	asked.DisruptionRequest = &state.DisruptionRequest{Reason: "operator", RequestedAt: testNow.Add(-time.Hour), By: "alice"}
	draining := claimOn("default-b", "default", state.Draining, "i-0b", "ip-b")
	draining.DrainingAt = at(testNow, -time.Minute)
	gone := claimOn("default-c", "default", state.Initialized, "i-0c", "ip-c")
	r := newRepairRig(t, true, append(claims, asked, draining, gone)...)
	r.insts.list = tagged(append(claims, asked, draining)...) // default-c's instance is not running
	r.nodes = append(nodes, sickNode(asked, corev1.NodeReady, corev1.ConditionFalse, time.Hour),
		sickNode(draining, corev1.NodeReady, corev1.ConditionFalse, time.Hour),
		sickNode(gone, corev1.NodeReady, corev1.ConditionUnknown, time.Hour))
	rep := r.run(t)
	assert.Empty(t, rep.Repairs, rep.String())
	assert.Empty(t, rep.RepairBlocked, "3 of 13 unhealthy: at most 3 may be")
	assert.Equal(t, "alice", r.store.claim(t, "default-a").DisruptionRequest.By, "the operator's request stands")
	assert.Nil(t, r.store.claim(t, "default-c").DisruptionRequest)
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{"Ready": "ready", "AcceleratedHardwareReady": "accelerated_hardware_ready",
		"InstanceStatus": "instance_status"} {
		assert.Equal(t, want, snakeCase(in))
	}
}
