package disruption_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func drifted(n disruption.Node, reason string) disruption.Node {
	n.Drifted, n.DriftWhy = reason, "oldImageId ami-old, newImageId ami-new"
	return n
}

func expiring(n disruption.Node, at time.Time) disruption.Node {
	n.ExpiresAt = at
	return n
}

func decideOne(t *testing.T, in disruption.Input) disruption.Command {
	t.Helper()
	res := disruption.Decide(in)
	require.Len(t, res.Commands, 1, "kept: %+v", res.Kept)
	return res.Commands[0]
}

func TestDriftReplacesTheDriftedNodeFirstEvenWhenItCostsMore(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	// consolidateAfter Never: consolidation takes nothing, drift ignores it (as Karpenter's does).
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, consolidateAfter(nil), onDemandOnly, amd64Only)},
		Nodes: []disruption.Node{
			drifted(node(small, nodeSpec{"old", "default", "medium", od, []*corev1.Pod{pod("web", "2500m")}}), "AMIDrift"),
			node(small, nodeSpec{"other", "default", "medium", od, []*corev1.Pod{pod("api", "2500m")}}),
		}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
	assert.Equal(t, disruption.MethodDrift, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action)
	assert.Equal(t, []string{"old"}, nodeNames(cmd))
	require.Len(t, cmd.Replacements, 1)
	assert.Contains(t, cmd.Why, "AMIDrift")
	assert.Contains(t, cmd.Why, "launch first")
	require.NoError(t, disruption.Validate(cmd, in), "the same snapshot confirms the command")

	// The node that has not drifted is kept, with consolidation's reason.
	res := disruption.Decide(in)
	assert.Contains(t, keptReason(res, "other"), "consolidateAfter Never")

	// Once the claim no longer drifts (say the AMI was rolled back), validation refuses.
	in.Nodes[0].Drifted = ""
	err := disruption.Validate(cmd, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no longer a candidate")
}

func TestDriftDeletesEmptyDriftedNodesTogetherWithinTheDriftedBudget(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	oneDrift := budgets(disruption.Budget{Nodes: "1", Reasons: []disruption.Reason{disruption.ReasonDrifted}})
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", oneDrift, consolidateAfter(nil))},
		Nodes: []disruption.Node{
			drifted(node(small, nodeSpec{"a", "default", "medium", od, []*corev1.Pod{daemonPod("ds-a")}}), "NodePoolDrifted"),
			drifted(node(small, nodeSpec{"b", "default", "medium", od, nil}), "NodePoolDrifted"),
			node(small, nodeSpec{"c", "default", "large", od, []*corev1.Pod{pod("web", "1")}}),
		}}
	res := disruption.Decide(in)
	require.Len(t, res.Commands, 1)
	cmd := res.Commands[0]
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Len(t, cmd.Nodes, 1, "the Drifted budget allows one node")
	other := "a"
	if nodeNames(cmd)[0] == "a" {
		other = "b"
	}
	assert.Contains(t, keptReason(res, other), "budget for Drifted")
}

func driftedAt(n disruption.Node, since time.Time) disruption.Node {
	n = drifted(n, "AMIDrift")
	n.DriftedSince = since
	return n
}

// Drift rolls in Karpenter's order: empty drifted nodes first, then the node that drifted first, whatever
// its name or what disrupting it costs.
func TestDriftRollsEmptyNodesFirstThenTheOldestDrifted(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	older, newer := now.Add(-3*time.Hour), now.Add(-time.Hour)
	oneDrift := budgets(disruption.Budget{Nodes: "1", Reasons: []disruption.Reason{disruption.ReasonDrifted}})

	t.Run("the oldest drifted node is replaced first", func(t *testing.T) {
		in := disruption.Input{Now: now, InstanceTypes: small,
			NodePools: []disruption.NodePool{pool("default", oneDrift, consolidateAfter(nil), onDemandOnly, amd64Only)},
			Nodes: []disruption.Node{
				// "a" sorts first by name and costs less to disrupt (one pod against two), but drifted later.
				driftedAt(node(small, nodeSpec{"a", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}), newer),
				driftedAt(node(small, nodeSpec{"b", "default", "medium", od, []*corev1.Pod{pod("api", "1"), pod("db", "1")}}), older),
				node(small, nodeSpec{"c", "default", "large", od, []*corev1.Pod{pod("batch", "1")}}),
			}}
		cmd := decideOne(t, in)
		assert.Equal(t, disruption.MethodDrift, cmd.Method)
		assert.Equal(t, []string{"b"}, nodeNames(cmd))
	})
	t.Run("the oldest empty drifted node takes the budget", func(t *testing.T) {
		in := disruption.Input{Now: now, InstanceTypes: small,
			NodePools: []disruption.NodePool{pool("default", oneDrift, consolidateAfter(nil))},
			Nodes: []disruption.Node{
				driftedAt(node(small, nodeSpec{"a", "default", "medium", od, nil}), newer),
				driftedAt(node(small, nodeSpec{"b", "default", "medium", od, nil}), older),
				driftedAt(node(small, nodeSpec{"c", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}), older.Add(-time.Hour)),
				node(small, nodeSpec{"d", "default", "large", od, []*corev1.Pod{pod("api", "1")}}),
			}}
		cmd := decideOne(t, in)
		assert.Equal(t, disruption.ActionDelete, cmd.Action, "an empty node goes before an older one with pods")
		assert.Equal(t, []string{"b"}, nodeNames(cmd))
	})
}

func TestDriftIsBlockedByDoNotDisruptAndPDBs(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, consolidateAfter(nil))},
		Nodes: []disruption.Node{
			drifted(node(small, nodeSpec{"pinned", "default", "medium", od, []*corev1.Pod{annotated(pod("db", "1"), disruption.AnnotationDoNotDisrupt, "true")}}), "AMIDrift"),
			drifted(node(small, nodeSpec{"guarded", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}), "AMIDrift"),
		},
		PDBs: []*policyv1.PodDisruptionBudget{pdb("web", "web", 0)},
	}
	in.Nodes[1].Node.Annotations = nil
	noded := drifted(node(small, nodeSpec{"annotated", "default", "medium", od, []*corev1.Pod{pod("api", "1")}}), "AMIDrift")
	noded.Node.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
	in.Nodes = append(in.Nodes, noded)
	res := disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Contains(t, keptReason(res, "pinned"), "do-not-disrupt")
	assert.Contains(t, keptReason(res, "guarded"), "web")
	assert.Contains(t, keptReason(res, "annotated"), "do-not-disrupt")
}

// Drift is eventual disruption, as in Karpenter: a drifted node whose claim has a
// terminationGracePeriod is rolled even when do-not-disrupt pods or a PDB would hold it (the drain is
// bounded by that period), one node per command and within the Drifted budget. Consolidation never
// takes such a node, and without the period the blockers hold.
func TestDriftWithTerminationGracePeriodGoesPastPodBlockers(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	withTGP := func(n disruption.Node) disruption.Node { n.TerminationGracePeriod = time.Hour; return n }
	pinned := annotated(pod("db", "2500m"), disruption.AnnotationDoNotDisrupt, "true")
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, consolidateAfter(nil), onDemandOnly, amd64Only)},
		Nodes: []disruption.Node{
			withTGP(drifted(node(small, nodeSpec{"pinned", "default", "medium", od, []*corev1.Pod{pinned}}), "AMIDrift")),
			node(small, nodeSpec{"other", "default", "medium", od, []*corev1.Pod{pod("api", "2500m")}}),
		},
	}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason)
	assert.Equal(t, []string{"pinned"}, nodeNames(cmd))
	require.NoError(t, disruption.Validate(cmd, in))

	guarded := withTGP(drifted(node(small, nodeSpec{"guarded", "default", "medium", od, []*corev1.Pod{pod("web", "2500m")}}), "AMIDrift"))
	in.Nodes[0] = guarded
	in.PDBs = []*policyv1.PodDisruptionBudget{pdb("web", "web", 0)}
	cmd = decideOne(t, in)
	assert.Equal(t, []string{"guarded"}, nodeNames(cmd), "a PDB at 0 does not hold it either")

	// Without a terminationGracePeriod the PDB holds the drifted node.
	in.Nodes[0].TerminationGracePeriod = 0
	res := disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Contains(t, keptReason(res, "guarded"), "PodDisruptionBudget default/web allows no disruption")

	// Not drifted, the period changes nothing: consolidation stays blocked by the pod.
	in.Nodes[0] = withTGP(node(small, nodeSpec{"guarded", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}))
	in.NodePools = []disruption.NodePool{pool("default", unlimitedBudget)}
	res = disruption.Decide(in)
	for _, c := range res.Commands {
		assert.NotContains(t, nodeNames(c), "guarded")
	}
	assert.Contains(t, keptReason(res, "guarded"), "PodDisruptionBudget default/web allows no disruption")
}

func TestDriftComesAfterEmptinessAndBeforeConsolidation(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget)},
		Nodes: []disruption.Node{
			node(small, nodeSpec{"empty", "default", "medium", od, nil}),
			drifted(node(small, nodeSpec{"drifted", "default", "large", od, []*corev1.Pod{pod("web", "3")}}), "SubnetDrift"),
			node(small, nodeSpec{"underused", "default", "large", od, []*corev1.Pod{pod("api", "500m")}}),
		}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonEmpty, cmd.Reason)
	in.Nodes = in.Nodes[1:]
	cmd = decideOne(t, in)
	assert.Equal(t, disruption.ReasonDrifted, cmd.Reason, cmd.Why)
}

func TestDriftWaitsWhenThePodsCannotBePlaced(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	// The pool now allows nothing the pod fits on: drift must not strand it.
	tiny := pool("default", unlimitedBudget, consolidateAfter(nil), func(p *disruption.NodePool) {
		schedulingtest.Requirement(scheduling.LabelInstanceType, scheduling.OpIn, "small")(&p.Scheduling)
	})
	in := disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{tiny},
		Nodes: []disruption.Node{drifted(node(small, nodeSpec{"old", "default", "large", od, []*corev1.Pod{pod("big", "6")}}), "RequirementsDrifted")}}
	res := disruption.Decide(in)
	assert.Empty(t, res.Commands)
	assert.Contains(t, keptReason(res, "old"), "not replaceable now")
}

func TestExpiryIsForcefulButLaunchesReplacementsFirst(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	// Budget 0 and a do-not-disrupt pod: neither holds expiry back.
	noBudget := budgets(disruption.Budget{Nodes: "0"})
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", noBudget, onDemandOnly, amd64Only)},
		Nodes: []disruption.Node{
			expiring(node(small, nodeSpec{"old", "default", "medium", od, []*corev1.Pod{annotated(pod("db", "2500m"), disruption.AnnotationDoNotDisrupt, "true")}}), now.Add(-time.Minute)),
			expiring(node(small, nodeSpec{"young", "default", "medium", od, []*corev1.Pod{pod("web", "2500m")}}), now.Add(time.Hour)),
		}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonExpired, cmd.Reason)
	assert.Equal(t, disruption.MethodForceful, cmd.Method)
	assert.Equal(t, []string{"old"}, nodeNames(cmd))
	assert.Equal(t, disruption.ActionReplace, cmd.Action, "the pod does not fit on the other node: capacity launches first")
	require.Len(t, cmd.Replacements, 1)
	assert.Contains(t, cmd.Why, "expired")
	require.NoError(t, disruption.Validate(cmd, in))

	// Not expired yet: nothing forceful; a node already disrupting is not expired again.
	in.Nodes[0].ExpiresAt = now.Add(time.Second)
	assert.Empty(t, disruption.Decide(in).Commands)
	in.Nodes[0].ExpiresAt = now
	in.Nodes[0].Disrupting = true
	assert.Empty(t, disruption.Decide(in).Commands)
	err := disruption.Validate(cmd, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already being disrupted")
}

func TestExpiryDeletesWhenThePodsFitAndStrandsNothingSilently(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only)},
		Nodes: []disruption.Node{
			expiring(node(small, nodeSpec{"old", "default", "medium", od, []*corev1.Pod{pod("web", "500m")}}), now),
			node(small, nodeSpec{"roomy", "default", "large", od, nil}),
		}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonExpired, cmd.Reason)
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Contains(t, cmd.Why, "fit on other nodes")

	// A pod that fits nowhere (its pool now launches only small) does not stop expiry; the Why says so.
	tiny := pool("default", func(p *disruption.NodePool) {
		schedulingtest.Requirement(scheduling.LabelInstanceType, scheduling.OpIn, "small")(&p.Scheduling)
	})
	in = disruption.Input{Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{tiny},
		Nodes: []disruption.Node{expiring(node(small, nodeSpec{"old", "default", "large", od, []*corev1.Pod{pod("big", "6")}}), now)}}
	cmd = decideOne(t, in)
	assert.Equal(t, disruption.ReasonExpired, cmd.Reason)
	assert.Contains(t, cmd.Why, "will be pending: default/big")
}

func TestManualRequestsComeFirstAndCarryTheOperatorsReason(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	asked := node(small, nodeSpec{"asked", "default", "medium", od, []*corev1.Pod{pod("web", "500m")}})
	asked.Requested, asked.RequestReason = true, "kernel CVE"
	asked.Node.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only, budgets(disruption.Budget{Nodes: "0"}))},
		Nodes: []disruption.Node{
			asked,
			expiring(node(small, nodeSpec{"old", "default", "large", od, nil}), now),
		}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonManual, cmd.Reason)
	assert.Equal(t, []string{"asked"}, nodeNames(cmd))
	assert.Contains(t, cmd.Why, `"kernel CVE"`)
	in.Nodes[0].Disrupting = true
	cmd = decideOne(t, in)
	assert.Equal(t, disruption.ReasonExpired, cmd.Reason)
	assert.Equal(t, []string{"old"}, nodeNames(cmd))
}

func TestRollsDoNotMovePodsOntoNodesAboutToBeRolled(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, consolidateAfter(nil), onDemandOnly, amd64Only)},
		Nodes: []disruption.Node{
			drifted(node(small, nodeSpec{"a", "default", "large", od, []*corev1.Pod{pod("web", "1")}}), "AMIDrift"),
			drifted(node(small, nodeSpec{"b", "default", "large", od, []*corev1.Pod{pod("api", "1")}}), "AMIDrift"),
		}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ActionReplace, cmd.Action, "b has room, but it drifted too: the pod moves once, to a new node")
	require.NoError(t, disruption.Validate(cmd, in))

	// Expiry likewise avoids a node expiring within ExpiryHorizon, but not one expiring later.
	in.Nodes[0] = expiring(node(small, nodeSpec{"a", "default", "large", od, []*corev1.Pod{pod("web", "1")}}), now)
	in.Nodes[1] = expiring(node(small, nodeSpec{"b", "default", "large", od, []*corev1.Pod{pod("api", "1")}}), now.Add(disruption.ExpiryHorizon-time.Second))
	assert.Equal(t, disruption.ActionReplace, decideOne(t, in).Action)
	in.Nodes[1].ExpiresAt = now.Add(disruption.ExpiryHorizon + time.Minute)
	assert.Equal(t, disruption.ActionDelete, decideOne(t, in).Action)
}

// A drifted node whose pods all fit on the other nodes is deleted, not replaced; its command moves the
// pods, and validation re-simulates it rather than taking it for the batch of empty drifted nodes.
func TestDriftDeleteThatMovesPodsPassesValidation(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", unlimitedBudget, consolidateAfter(nil), onDemandOnly, amd64Only)},
		Nodes: []disruption.Node{
			drifted(node(small, nodeSpec{"old", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}), "AMIDrift"),
			node(small, nodeSpec{"roomy", "default", "large", od, []*corev1.Pod{pod("api", "1")}}),
		}}
	cmd := decideOne(t, in)
	require.Equal(t, disruption.ActionDelete, cmd.Action)
	require.Len(t, cmd.Moves, 1)
	assert.NoError(t, disruption.Validate(cmd, in), "the same snapshot confirms the command")

	in.Nodes[1] = node(small, nodeSpec{"roomy", "default", "large", od, []*corev1.Pod{pod("api", "1"), pod("batch", "6500m")}})
	err := disruption.Validate(cmd, in)
	require.Error(t, err, "once the pods no longer fit, the delete is refused")
	assert.Contains(t, err.Error(), "would now be replaced")
}

// Node repair's requests come before an operator's and expiry, for the reason Unhealthy: budgets and
// do-not-disrupt do not hold them, capacity launches first, and no pod moves onto a node that is not
// Ready (another unhealthy node whose repair is not due yet).
func TestUnhealthyNodesAreReplacedFirstAndTakeNoPods(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	sick := node(small, nodeSpec{"sick", "default", "medium", od, []*corev1.Pod{annotated(pod("db", "1"), disruption.AnnotationDoNotDisrupt, "true")}})
	sick.Requested, sick.RequestReason, sick.Unhealthy = true, "Ready=False for 31m0s", "Ready=False for 31m0s"
	asked := node(small, nodeSpec{"asked", "default", "medium", od, nil})
	asked.Requested, asked.RequestReason = true, "kernel CVE"
	// roomy has room for db, but its kubelet stopped reporting: db must not move there.
	roomy := node(small, nodeSpec{"roomy", "default", "large", od, nil})
	roomy.Node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}
	in := disruption.Input{Now: now, InstanceTypes: small,
		NodePools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only, budgets(disruption.Budget{Nodes: "0"}))},
		Nodes:     []disruption.Node{sick, asked, roomy}}
	cmd := decideOne(t, in)
	assert.Equal(t, disruption.ReasonUnhealthy, cmd.Reason)
	assert.Equal(t, disruption.MethodForceful, cmd.Method)
	assert.Equal(t, []string{"sick"}, nodeNames(cmd))
	assert.Equal(t, disruption.ActionReplace, cmd.Action, "db fits only on a node that is not Ready: capacity launches first")
	assert.Contains(t, cmd.Why, "unhealthy: sick Ready=False for 31m0s")
	require.NoError(t, disruption.Validate(cmd, in))

	in.Nodes[2].Node.Status.Conditions[0].Status = corev1.ConditionTrue // roomy is Ready: db moves there
	cmd = decideOne(t, in)
	assert.Equal(t, disruption.ReasonUnhealthy, cmd.Reason)
	assert.Equal(t, disruption.ActionDelete, cmd.Action, cmd.Why)

	in.Nodes[0].Unhealthy = "" // an operator's request, no longer a repair: it comes after... the other request
	cmd = decideOne(t, in)
	assert.Equal(t, disruption.ReasonManual, cmd.Reason)
	assert.Equal(t, []string{"asked", "sick"}, nodeNames(cmd))
	in.Nodes[0].Disrupting = true
	err := disruption.Validate(disruption.Command{Reason: disruption.ReasonUnhealthy, Nodes: []disruption.CommandNode{{Name: "sick", NodePool: "default"}}}, in)
	require.Error(t, err)
}
