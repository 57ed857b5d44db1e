package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// A drain can start at any moment of a registration (the termination flow moves the claim to draining).
// Whatever the moment, the claim must name its Node before the Node is touched, and the unregistered
// taint must stay on a Node whose claim has left service.
func TestRegistrationRecordsTheNodeBeforeOpeningIt(t *testing.T) {
	const lift = "untaint ip-a " + UnregisteredTaintKey
	cases := []struct {
		name string
		// drainAfterList moves the claim to draining right after the pass listed the claims (before its
		// claim write); drainOnFirstWrite does it just before the first write to the Node.
		drainAfterList, drainOnFirstWrite bool
		wantCalls                         []string
		wantLifecycle                     state.Lifecycle
		wantNodeName                      string
	}{
		{name: "no drain: claim first, then finalizer, labels, and the lift last",
			wantCalls:     []string{"addFinalizer ip-a nodewright.sh/termination", "label ip-a", lift},
			wantLifecycle: state.Registered, wantNodeName: "ip-a"},
		{name: "drain starts while the Node is patched: the taint stays and the claim names the Node",
			drainOnFirstWrite: true,
			wantCalls:         []string{"addFinalizer ip-a nodewright.sh/termination", "label ip-a"},
			wantLifecycle:     state.Draining, wantNodeName: "ip-a"},
		{name: "drain starts before the claim write: the Node is not touched",
			drainAfterList: true, wantLifecycle: state.Draining},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, claimOn("default-a", "default", state.Launched, "i-0a", ""))
			r.nodes = listedNodes{node("ip-a", "aws:///us-east-1a/i-0a", nil, unregistered)}
			r.instances.list = []instance.Instance{{ID: "i-0a", Tags: map[string]string{instance.TagNodeClaim: "default-a"}}}
			drain := func(s *hookStore) {
				c := s.claim(t, "default-a")
				c.Lifecycle, c.DrainingAt, c.DisruptionReason = state.Draining, &r.now, "Interrupted"
			}
			if tc.drainAfterList {
				r.store.afterList = drain
			}
			var atFirstWrite *state.Claim
			r.writer.before = func(string) {
				if atFirstWrite != nil {
					return
				}
				c := *r.store.claim(t, "default-a")
				atFirstWrite = &c
				if tc.drainOnFirstWrite {
					drain(r.store)
				}
			}

			rep := r.run(t)
			assert.Equal(t, tc.wantCalls, r.writer.calls)
			if atFirstWrite != nil {
				assert.Equal(t, "ip-a", atFirstWrite.NodeName, "the claim names its Node before the Node is written")
				assert.Equal(t, state.Registered, atFirstWrite.Lifecycle)
			}
			c := r.store.claim(t, "default-a")
			assert.Equal(t, tc.wantLifecycle, c.Lifecycle)
			assert.Equal(t, tc.wantNodeName, c.NodeName)
			for _, e := range rep.Errors {
				assert.NotContains(t, e, "default-a")
			}
		})
	}
}

func TestRegistrationCutShortIsFinishedBeforeInitialization(t *testing.T) {
	ready := node("ip-b", "aws:///us-east-1a/i-0b", map[string]string{"karpenter.sh/nodepool": "default",
		"karpenter.k8s.aws/ec2nodeclass": "default", "node.kubernetes.io/instance-type": "m5.large",
		"topology.kubernetes.io/zone": "us-east-1a", "karpenter.sh/capacity-type": "on-demand"}, unregistered)
	ready.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	c := claimOn("default-b", "default", state.Registered, "i-0b", "ip-b")
	c.InstanceType, c.CapacityType = "m5.large", "on-demand"
	r := newRig(t, c)
	r.nodes = listedNodes{ready}
	r.instances.list = []instance.Instance{{ID: "i-0b", Tags: map[string]string{instance.TagNodeClaim: "default-b"}}}

	rep := r.run(t)
	assert.Equal(t, []string{"addFinalizer ip-b nodewright.sh/termination", "label ip-b", "untaint ip-b " + UnregisteredTaintKey},
		r.writer.calls, "the pass that moved the claim stopped before the Node was opened; this one finishes it")
	assert.Equal(t, 0, rep.Initialized, "a Node still carrying the unregistered taint is not initialized")
	assert.Contains(t, rep.Waiting["default-b"], "Unregistered")
	assert.Equal(t, state.Registered, r.store.claim(t, "default-b").Lifecycle)
}

func TestNodesRegisteredWithoutTheFinalizerGetIt(t *testing.T) {
	done := node("ip-c", "aws:///us-east-1a/i-0c", map[string]string{RegisteredLabel: "true", InitializedLabel: "true"})
	has := ourNode("ip-d", "i-0d", false)
	r := newRig(t, claimOn("default-c", "default", state.Initialized, "i-0c", "ip-c"),
		claimOn("default-d", "default", state.Initialized, "i-0d", "ip-d"))
	r.nodes = listedNodes{done, has}
	r.instances.list = []instance.Instance{{ID: "i-0c", Tags: map[string]string{instance.TagNodeClaim: "default-c"}},
		{ID: "i-0d", Tags: map[string]string{instance.TagNodeClaim: "default-d"}}}

	r.store.config = r.store.config[:len(r.store.config)-1] // without the broken NodePool
	rep := r.run(t)
	require.Empty(t, rep.Errors)
	assert.Equal(t, []string{"addFinalizer ip-c nodewright.sh/termination"}, r.writer.calls,
		"a Node registered before the finalizer existed gets it; one that has it is not written")
}
