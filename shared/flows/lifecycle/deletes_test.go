package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestDeletedNodeHandsItsClaimOverOnce(t *testing.T) {
	byName := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	byProvider := claimOn("default-b", "default", state.Initialized, "i-0b", "")
	draining := claimOn("default-c", "default", state.Draining, "i-0c", "ip-c")
	draining.DrainingAt = at(testNow, -time.Minute)
	kept := claimOn("default-d", "default", state.Initialized, "i-0d", "ip-d")
	notOurs := ourNode("ip-d", "i-0d", true)
	notOurs.Finalizers = []string{"example.com/other"}
	r := newRig(t, byName, byProvider, draining, kept)
	r.nodes = listedNodes{ourNode("ip-a", "i-0a", true), ourNode("ip-b", "i-0b", true), ourNode("ip-c", "i-0c", true), notOurs}
	r.instances.list = tagged(byName, byProvider, draining, kept)

	rep := r.run(t)
	require.Len(t, r.queue.sent, 2, rep.String())
	for i, want := range []string{"default-a", "default-b"} {
		assert.Equal(t, want, r.queue.sent[i].Claim)
		assert.Equal(t, ReasonNodeDeleted, r.queue.sent[i].Reason)
		assert.Equal(t, r.now, r.queue.sent[i].RequestedAt)
		assert.Equal(t, []string{"TerminationRequested/NodeDeleted"}, r.store.decisionsOf("nodeclaim/"+want))
	}
	assert.Contains(t, rep.Waiting["node/ip-c"], "draining", "a claim already draining is the termination flow's")
	assert.Empty(t, r.writer.calls, "no finalizer is removed while a claim stands for the Node")

	r.now = r.now.Add(time.Minute) // the next pass, before the termination flow picked them up
	rep = r.run(t)
	assert.Len(t, r.queue.sent, 2, "handed over once, not every pass: %s", rep)
	assert.Contains(t, rep.Waiting["node/ip-a"], "was handed to the termination flow")
}

func TestDeletingNodeWithoutLiveClaimLosesTheFinalizerOnlyOnceItsInstanceIsGone(t *testing.T) {
	deleted := claimOn("default-e", "default", state.Deleted, "i-0e", "ip-e")
	cases := []struct {
		name      string
		claims    []state.Claim
		node      *corev1.Node
		listed    []string
		listErr   error
		live      []string // live when EC2 is asked by id, though not listed
		liveErr   error
		wantCalls []string
	}{
		{name: "claim deleted, instance gone", claims: []state.Claim{deleted}, node: ourNode("ip-e", "i-0e", true),
			wantCalls: []string{"removeFinalizer ip-e nodewright.sh/termination"}},
		{name: "no claim at all, instance gone", node: ourNode("ip-f", "i-0f", true),
			wantCalls: []string{"removeFinalizer ip-f nodewright.sh/termination"}},
		{name: "claim deleted, instance still listed", claims: []state.Claim{deleted}, node: ourNode("ip-e", "i-0e", true),
			listed: []string{"i-0e"}},
		{name: "instance list failed", node: ourNode("ip-f", "i-0f", true), listErr: errors.New("ec2: throttled")},
		{name: "claim deleted, instance not listed yet but live by id", claims: []state.Claim{deleted},
			node: ourNode("ip-e", "i-0e", true), live: []string{"i-0e"}},
		{name: "instance not listed, EC2 cannot be asked by id", node: ourNode("ip-f", "i-0f", true),
			liveErr: errors.New("ec2: throttled")},
		{name: "no instance id in the providerID", node: func() *corev1.Node {
			n := ourNode("ip-g", "i-0g", true)
			n.Spec.ProviderID = "kind://docker/ip-g"
			return n
		}()},
		{name: "not deleting", node: ourNode("ip-h", "i-0h", false)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.claims...)
			r.nodes = listedNodes{tc.node}
			for _, id := range tc.listed {
				r.instances.list = append(r.instances.list, tagged(claimOn("x", "default", state.Deleted, id, ""))...)
			}
			for _, id := range tc.live {
				r.instances.live = append(r.instances.live, tagged(claimOn("x", "default", state.Deleted, id, ""))...)
			}
			r.instances.err, r.instances.liveErr = tc.listErr, tc.liveErr
			rep := r.run(t)
			assert.Equal(t, tc.wantCalls, r.writer.calls)
			assert.Equal(t, len(tc.wantCalls), rep.FinalizersRemoved)
			assert.Empty(t, r.queue.sent)
			if len(tc.wantCalls) > 0 {
				assert.Equal(t, []string{"FinalizerRemoved/InstanceGone"}, r.store.decisionsOf("node/"+tc.node.Name))
			}
		})
	}
}

// nodesOf is the Ready Node of each claim, as its kubelet registered it: a live claim whose Node is
// missing while its instance runs is a lost Node, which other rules hand over.
func nodesOf(claims ...state.Claim) listedNodes {
	var out listedNodes
	for _, c := range claims {
		n := ourNode(c.NodeName, c.InstanceID, false)
		n.Labels["karpenter.sh/nodepool"] = c.NodePool
		out = append(out, n)
	}
	return out
}

func TestRemovedNodePoolsClaimsAreHandedOver(t *testing.T) {
	claims := []state.Claim{
		claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a"),
		claimOn("broken-b", "broken", state.Initialized, "i-0b", "ip-b"),
		claimOn("gone-c", "gone", state.Initialized, "i-0c", "ip-c"),
		claimOn("gone-d", "gone", state.Initialized, "i-0d", "ip-d"),
		claimOn("gone-p", "gone", state.Pending, "", ""),
		claimOn("gone-x", "gone", state.Draining, "i-0x", "ip-x"),
	}
	claims[4].ProviderID = ""
	claims[5].DrainingAt = at(testNow, -time.Minute)

	// sent lists the hand-overs for the pool's removal (moving the clock lets other rules act too).
	sent := func(r *rig) []string {
		var got []string
		for _, req := range r.queue.sent {
			if req.Reason == ReasonNodePoolDeleted {
				got = append(got, req.Claim+"/"+req.Reason)
			}
		}
		return got
	}
	t.Run("claims of a NodePool missing for several passes go, within the budget, once", func(t *testing.T) {
		r := newRig(t, claims...)
		r.instances.list = tagged(claims[0], claims[1], claims[2], claims[3], claims[5])
		r.nodes = nodesOf(claims[0], claims[1], claims[2], claims[3], claims[5])
		for pass := 1; pass < RemovedPoolPasses; pass++ {
			rep := r.run(t)
			assert.Empty(t, sent(r), "pass %d: a pool missing for a moment is not drained: %s", pass, rep)
			require.NotEmpty(t, rep.Held)
			assert.Contains(t, rep.Held[0], "NodePool gone is missing")
			r.now = r.now.Add(time.Minute)
		}
		assert.Equal(t, []string{"NodePoolRemovalPending/NodePoolMissing"}, r.store.decisionsOf("nodepool/gone"), "recorded once")
		rep := r.run(t)
		assert.Empty(t, sent(r), "enough passes but not yet %s: %s", RemovedPoolWait, rep)

		r.now = testNow.Add(RemovedPoolWait)
		rep = r.run(t)
		assert.Equal(t, []string{"gone-c/NodePoolDeleted"}, sent(r),
			"one at a time (10%% of two, rounded up); not the pool that only failed validation, not a pending claim, "+
				"not one already draining: %s", rep)
		assert.Equal(t, []string{"TerminationRequested/NodePoolDeleted"}, r.store.decisionsOf("nodeclaim/gone-c"))
		assert.Contains(t, strings.Join(rep.Held, "\n"), "1 NodeClaims of NodePool gone wait for its budget")

		r.run(t)
		assert.Len(t, sent(r), 1, "not again, and the budget still holds")
		r.store.claim(t, "gone-c").Lifecycle = state.Draining // the termination flow took it
		r.store.release("gone", "gone-c")                     // and gave its slot back once its node was gone
		r.run(t)
		assert.Equal(t, []string{"gone-c/NodePoolDeleted", "gone-d/NodePoolDeleted"}, sent(r))
	})
	t.Run("a pool back in the configuration starts over", func(t *testing.T) {
		r := newRig(t, claims...)
		r.instances.list = tagged(claims[0], claims[1], claims[2], claims[3], claims[5])
		r.nodes = nodesOf(claims[0], claims[1], claims[2], claims[3], claims[5])
		r.run(t)
		r.run(t)
		r.store.config = append(r.store.config, state.ConfigItem{Kind: state.KindNodePool, Name: "gone", Spec: r.store.config[0].Spec})
		r.run(t)
		assert.Empty(t, r.store.absences, "the absence is cleared")
		r.store.config = configItems()
		r.now = testNow.Add(time.Hour)
		r.run(t)
		assert.Empty(t, sent(r), "one pass after coming back and going again is not enough")
	})
	t.Run("an empty configuration drains nothing and says why", func(t *testing.T) {
		r := newRig(t, claims...)
		r.store.config = nil
		rep := r.run(t)
		assert.Empty(t, r.queue.sent)
		require.Len(t, rep.Held, 1)
		assert.Contains(t, rep.Held[0], "the configuration holds no NodePool")
		assert.Equal(t, []string{"NodePoolRemovalHeld/NoNodePools"}, r.store.decisionsOf("nodepools"))
	})
	t.Run("an unreadable NodePool list decides nothing", func(t *testing.T) {
		r := newRig(t, claims...)
		r.store.poolsErr = errors.New("dynamodb: throttled")
		rep := r.run(t)
		assert.Empty(t, r.queue.sent)
		require.Len(t, rep.Held, 1)
		assert.Contains(t, rep.Held[0], "dynamodb: throttled")
	})
}
