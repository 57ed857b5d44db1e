package mirror

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

func testPool(name, class string) *apis.NodePool {
	np := &apis.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}}
	np.Spec.Template.Spec.NodeClassRef = &apis.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: class}
	return np
}

func poolClaim(name string, l state.Lifecycle, cpu, mem string) PoolClaim {
	c := state.Claim{Name: name, NodePool: "default", NodeClass: "default", Lifecycle: l, TemplateHash: "t1", NodeClassHash: "c1", CreatedAt: t0}
	if cpu == "" {
		return PoolClaim{Claim: c}
	}
	return PoolClaim{Claim: c, Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("29")}}
}

func condOf(t *testing.T, conds []metav1.Condition, typ string) metav1.Condition {
	t.Helper()
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	require.Failf(t, "no condition", "%s among %v", typ, conds)
	return metav1.Condition{}
}

var readyClass = &metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready"}

func TestNodePoolStatusSumsTheLiveClaimsNotBeingDisrupted(t *testing.T) {
	in := Pool{NodePool: testPool("default", "default"), Class: readyClass, TemplateHash: "t1", ClassHash: "c1", Claims: []PoolClaim{
		poolClaim("a", state.Initialized, "2", "8Gi"),
		poolClaim("b", state.Launched, "4", "16Gi"),
		poolClaim("c", state.Pending, "", ""),             // not launched: no capacity, not counted
		poolClaim("d", state.Draining, "2", "8Gi"),        // marked for deletion: not counted
		poolClaim("e", state.Terminating, "2", "8Gi"),     // idem
		poolClaim("f", state.Registered, "500m", "512Mi"), // joining
	}}
	obj := NodePool(in, t0)
	st := obj.Status.(NodePoolStatus)
	assert.Equal(t, int64(3), st.Nodes)
	assert.Equal(t, "6500m", ptr(st.Resources[corev1.ResourceCPU]).String())
	assert.Equal(t, "25088Mi", ptr(st.Resources[corev1.ResourceMemory]).String())
	assert.Equal(t, "87", ptr(st.Resources[corev1.ResourcePods]).String())
	assert.Equal(t, "3", ptr(st.Resources["nodes"]).String())
	assert.Equal(t, "0", ptr(st.Resources[corev1.ResourceEphemeralStorage]).String(), "Karpenter's base resources are always there")
	spec := obj.Spec.(apis.NodePoolSpec)
	assert.Equal(t, Group, spec.Template.Spec.NodeClassRef.Group, "the mirror points at the EC2NodeClass mirror")
	assert.Equal(t, "karpenter.k8s.aws", in.NodePool.Spec.Template.Spec.NodeClassRef.Group, "the configuration is not changed")

	empty := NodePool(Pool{NodePool: testPool("empty", "default"), Class: readyClass}, t0).Status.(NodePoolStatus)
	assert.Equal(t, int64(0), empty.Nodes)
}

func ptr(q resource.Quantity) *resource.Quantity { return &q }

func TestNodePoolConditions(t *testing.T) {
	notReady := &metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "SubnetsNotFound", Message: "subnetSelectorTerms match no subnet"}
	for _, tc := range []struct {
		name                        string
		class                       *metav1.Condition
		invalid                     string
		validation, classReady, rdy metav1.ConditionStatus
		reason                      string
	}{
		{"ready", readyClass, "", "True", "True", "True", "Ready"},
		{"class not ready", notReady, "", "True", "False", "False", "SubnetsNotFound"},
		{"class not configured", nil, "", "True", "False", "False", ReasonNodeClassNotFound},
		{"class readiness unknown", &metav1.Condition{Type: "Ready", Status: metav1.ConditionUnknown}, "", "True", "False", "False", ReasonNodeClassReadinessUnknown},
		{"invalid", readyClass, "requirement key karpenter.sh/nodepool is restricted", "False", "True", "False", ReasonNodePoolValidationFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds := NodePool(Pool{NodePool: testPool("default", "default"), Class: tc.class, Invalid: tc.invalid}, t0).Status.(NodePoolStatus).Conditions
			assert.Equal(t, tc.validation, condOf(t, conds, "ValidationSucceeded").Status)
			assert.Equal(t, tc.classReady, condOf(t, conds, "NodeClassReady").Status)
			r := condOf(t, conds, "Ready")
			assert.Equal(t, tc.rdy, r.Status)
			assert.Equal(t, tc.reason, r.Reason)
			if tc.class == notReady {
				assert.Equal(t, notReady.Message, condOf(t, conds, "NodeClassReady").Message, "NodeClassReady carries the class's reason and message")
			}
		})
	}
}

func TestNodeRegistrationHealthyFollowsTheLastFourOutcomes(t *testing.T) {
	registered := func(name string, at time.Duration) PoolClaim {
		pc := poolClaim(name, state.Initialized, "2", "8Gi")
		ts := t0.Add(at)
		pc.Claim.RegisteredAt = &ts
		return pc
	}
	timedOut := func(name string, at time.Duration) PoolClaim {
		pc := poolClaim(name, state.Terminating, "2", "8Gi")
		ts := t0.Add(at)
		pc.Claim.DisruptionReason, pc.Claim.TerminatingAt = RegistrationTimeoutReason, &ts
		return pc
	}
	health := func(claims ...PoolClaim) metav1.Condition {
		conds := NodePool(Pool{NodePool: testPool("default", "default"), Class: readyClass, TemplateHash: "t1", ClassHash: "c1", Claims: claims},
			t0).Status.(NodePoolStatus).Conditions
		return condOf(t, conds, "NodeRegistrationHealthy")
	}
	assert.Equal(t, metav1.ConditionUnknown, health().Status, "no outcome yet")
	assert.Equal(t, metav1.ConditionTrue, health(registered("a", 1)).Status)
	assert.Equal(t, metav1.ConditionTrue, health(registered("a", 1), timedOut("b", 2)).Status, "one failure in four is healthy")
	bad := health(registered("a", 1), timedOut("b", 2), timedOut("c", 3))
	assert.Equal(t, metav1.ConditionFalse, bad.Status, "two failures in four are unhealthy")
	assert.Equal(t, ReasonRegistrationFailed, bad.Reason)
	assert.Equal(t, metav1.ConditionTrue, health(timedOut("b", 2), timedOut("c", 3), registered("d", 4), registered("e", 5), registered("f", 6),
		registered("g", 7)).Status, "the failures fell out of the last four")
	old := timedOut("b", 2)
	old.Claim.NodeClassHash = "c0"
	older := timedOut("c", 3)
	older.Claim.TemplateHash = "t0"
	assert.Equal(t, metav1.ConditionTrue, health(registered("a", 1), old, older).Status, "failures of an earlier template or class do not count")
	assert.Equal(t, metav1.ConditionTrue, condOf(t, NodePool(Pool{NodePool: testPool("default", "default"), Class: nil,
		Claims: []PoolClaim{registered("a", 1)}}, t0).Status.(NodePoolStatus).Conditions, "NodeRegistrationHealthy").Status,
		"not part of Ready")
}

func TestKeepTransitionTimesKeepsOnlyUnchangedConditions(t *testing.T) {
	before := metav1.NewTime(t0)
	prev := []metav1.Condition{{Type: "A", Status: "True", LastTransitionTime: before}, {Type: "B", Status: "True", LastTransitionTime: before}}
	now := metav1.NewTime(t0.Add(time.Hour))
	conds := []metav1.Condition{{Type: "A", Status: "True", LastTransitionTime: now}, {Type: "B", Status: "False", LastTransitionTime: now},
		{Type: "C", Status: "True", LastTransitionTime: now}}
	KeepTransitionTimes(conds, prev)
	assert.Equal(t, before, conds[0].LastTransitionTime)
	assert.Equal(t, now, conds[1].LastTransitionTime, "B transitioned")
	assert.Equal(t, now, conds[2].LastTransitionTime, "C is new")
}
