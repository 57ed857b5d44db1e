package mirror

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// condition finds a condition by type.
func condition(t *testing.T, o Object, typ string) metav1.Condition {
	t.Helper()
	for _, c := range o.Status.(NodeClaimStatus).Conditions {
		if c.Type == typ {
			return c
		}
	}
	require.Failf(t, "no condition", "%s has no %s condition", o.Name, typ)
	return metav1.Condition{}
}

func hasCondition(o Object, typ string) bool {
	for _, c := range o.Status.(NodeClaimStatus).Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}

func TestAnInitializedClaimIsReadyWithItsNode(t *testing.T) {
	in := initializedClaim(7)
	o := NodeClaim(in)
	assert.Equal(t, "default-00007", o.Name)
	for k, v := range map[string]string{"node.kubernetes.io/instance-type": "m5.large", "topology.kubernetes.io/zone": "us-east-1a",
		"karpenter.sh/capacity-type": "on-demand", "karpenter.sh/nodepool": "default", "team": "a"} {
		assert.Equal(t, v, o.Labels[k], "label %s (the printer columns read them)", k)
	}
	spec := o.Spec.(NodeClaimSpec)
	require.NotEmpty(t, spec.Requirements)
	assert.Equal(t, corev1.LabelInstanceTypeStable, spec.Requirements[0].Key)
	assert.Equal(t, []string{"m5.large", "m5.xlarge"}, spec.Requirements[0].Values, "the launch's options")
	assert.Equal(t, "default", spec.NodeClassRef.Name)
	assert.Equal(t, Group, spec.NodeClassRef.Group, "the reference stays in Nodewright's group")
	assert.Equal(t, "1500m", spec.Resources.Requests["cpu"])
	st := o.Status.(NodeClaimStatus)
	assert.Equal(t, in.Record.NodeName, st.NodeName)
	assert.Equal(t, in.Record.ProviderID, st.ProviderID)
	assert.Equal(t, "ami-0123456789abcdef0", st.ImageID)
	assert.Equal(t, "7910Mi", st.Capacity.Memory().String())
	for _, typ := range []string{"Launched", "Registered", "Initialized", "Ready"} {
		assert.Equal(t, metav1.ConditionTrue, condition(t, o, typ).Status, typ)
	}
	assert.Equal(t, t0.Add(3*time.Minute), condition(t, o, "Initialized").LastTransitionTime.UTC(), "dated when the claim got there")
	assert.False(t, hasCondition(o, "Drifted"))
	assert.False(t, hasCondition(o, "DisruptionReason"))
}

func TestAClaimWhoseNodeHasNotRegisteredIsNotReadyWithItsReason(t *testing.T) {
	c := initializedClaim(1).Record
	c.Lifecycle, c.NodeName, c.RegisteredAt, c.InitializedAt = state.Launched, "", nil, nil
	o := NodeClaim(Claim{Record: c, Waiting: "NodeNotFound"})
	assert.Equal(t, metav1.ConditionTrue, condition(t, o, "Launched").Status)
	assert.Equal(t, metav1.ConditionUnknown, condition(t, o, "Registered").Status)
	ready := condition(t, o, "Ready")
	assert.Equal(t, metav1.ConditionFalse, ready.Status)
	assert.Equal(t, "NodeNotFound", ready.Reason)
	assert.Empty(t, o.Status.(NodeClaimStatus).NodeName)

	c.Lifecycle, c.NodeName = state.Registered, "ip-10-0-0-1.ec2.internal"
	o = NodeClaim(Claim{Record: c, Waiting: "StartupTaintsExist: node.cilium.io/agent-not-ready:NoExecute"})
	init := condition(t, o, "Initialized")
	assert.Equal(t, metav1.ConditionUnknown, init.Status)
	assert.Equal(t, "StartupTaintsExist", init.Reason)
	assert.Equal(t, "node.cilium.io/agent-not-ready:NoExecute", init.Message)
	assert.Equal(t, "StartupTaintsExist", condition(t, o, "Ready").Reason)

	c.Lifecycle, c.InstanceID, c.LaunchedAt = state.Pending, "", nil
	o = NodeClaim(Claim{Record: c})
	assert.Equal(t, metav1.ConditionUnknown, condition(t, o, "Launched").Status)
	assert.Equal(t, "AwaitingLaunch", condition(t, o, "Ready").Reason)
}

func TestTheLifecycleAsThePassLeftItWins(t *testing.T) {
	c := initializedClaim(2)
	c.Record.Lifecycle, c.Record.InitializedAt = state.Registered, nil
	c.Lifecycle = state.Initialized // the pass initialized it after reading the record
	o := NodeClaim(c)
	init := condition(t, o, "Initialized")
	assert.Equal(t, metav1.ConditionTrue, init.Status)
	assert.Equal(t, c.Now, init.LastTransitionTime.UTC(), "dated by the pass until the record has the time")
	c.Record.InitializedAt = &t0
	later, err := hashOf(NodeClaim(c))
	require.NoError(t, err)
	now, err := hashOf(o)
	require.NoError(t, err)
	assert.Equal(t, now, later, "the record's own time does not rewrite the mirror")
}

func TestDriftAndDisruptionAreConditions(t *testing.T) {
	c := initializedClaim(3)
	c.Record.Drifted = &state.DriftCondition{Reason: "NodePoolDrifted", Details: map[string]string{"old": "1", "new": "2"}, Since: t0}
	c.Record.Lifecycle, c.Record.DisruptionReason = state.Draining, "Expired"
	o := NodeClaim(c)
	d := condition(t, o, "Drifted")
	assert.Equal(t, metav1.ConditionTrue, d.Status)
	assert.Equal(t, "NodePoolDrifted", d.Reason)
	assert.Equal(t, "new=2, old=1", d.Message)
	dr := condition(t, o, "DisruptionReason")
	assert.Equal(t, "Expired", dr.Reason)
	assert.Equal(t, metav1.ConditionTrue, condition(t, o, "Ready").Status, "a draining node is still ready, as in Karpenter")
	assert.False(t, hasCondition(o, "Consolidatable"), "the claim record does not hold the last pod event")
}

// Consolidatable shows the disruption run's mark while the claim is initialized, dated when the run set
// it, and is absent without the mark and once the claim drains (its DisruptionReason says the rest).
func TestConsolidatableShowsTheRunsMarkWhileTheClaimIsInitialized(t *testing.T) {
	c := initializedClaim(3).Record
	assert.False(t, hasCondition(NodeClaim(Claim{Record: c}), "Consolidatable"), "no mark, no condition")

	since := t0.Add(20 * time.Minute)
	c.Consolidatable = &state.ConsolidatableMark{Since: since}
	cond := condition(t, NodeClaim(Claim{Record: c}), "Consolidatable")
	assert.Equal(t, metav1.ConditionTrue, cond.Status)
	assert.Equal(t, "Consolidatable", cond.Reason)
	assert.Equal(t, ConsolidatableMessage, cond.Message)
	assert.Equal(t, since, cond.LastTransitionTime.UTC())

	h1, err := hashOf(NodeClaim(Claim{Record: c}))
	require.NoError(t, err)
	unmarked := c
	unmarked.Consolidatable = nil
	h0, err := hashOf(NodeClaim(Claim{Record: unmarked}))
	require.NoError(t, err)
	assert.NotEqual(t, h0.String(), h1.String(), "setting or clearing the mark is a change the writers write")

	c.Lifecycle = state.Draining
	assert.False(t, hasCondition(NodeClaim(Claim{Record: c}), "Consolidatable"), "a draining claim does not show it")
}
