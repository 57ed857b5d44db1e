package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/reconcile"
)

// A Node deleted with Nodewright's finalizer stripped leaves a registered claim whose instance runs: the
// pass notes it, and hands the claim to the termination flow once the Node has stayed gone for the grace.
func TestLostNodeIsHandedToTerminationAfterTheGrace(t *testing.T) {
	c := claimOn("default-a", "default", state.Initialized, "i-0a", "ip-a")
	r := newRig(t, c)
	r.instances.list = tagged(c)

	rep := r.run(t)
	assert.Equal(t, 1, rep.NodesLost, rep.String())
	assert.Empty(t, r.queue.sent, "one look decides nothing destructive")
	lost := r.store.claim(t, "default-a").NodeLostAt
	require.NotNil(t, lost)
	assert.True(t, testNow.Equal(*lost))
	assert.Equal(t, state.Initialized, r.store.claim(t, "default-a").Lifecycle)
	assert.Equal(t, []string{"NodeLost/NodeLost"}, r.store.decisionsOf("nodeclaim/default-a"))

	r.now = testNow.Add(reconcile.NodeLostGrace - time.Second)
	rep = r.run(t)
	assert.Empty(t, r.queue.sent, "within the grace: %s", rep)
	assert.True(t, testNow.Equal(*r.store.claim(t, "default-a").NodeLostAt), "noted once, when first seen")

	r.now = testNow.Add(reconcile.NodeLostGrace)
	rep = r.run(t)
	require.Len(t, r.queue.sent, 1, rep.String())
	assert.Equal(t, "default-a", r.queue.sent[0].Claim)
	assert.Equal(t, "node_lost", r.queue.sent[0].Reason)
	assert.Empty(t, r.writer.calls, "the lifecycle writes to no Node: there is none, and removal is the termination flow's")

	r.now = testNow.Add(reconcile.NodeLostGrace + time.Minute)
	r.run(t)
	assert.Len(t, r.queue.sent, 1, "handed over once, then the stalled-drain rule watches it")
}

func TestLostNodeThatComesBackIsForgotten(t *testing.T) {
	c := claimOn("default-b", "default", state.Initialized, "i-0b", "ip-b")
	r := newRig(t, c)
	r.instances.list = tagged(c)
	r.run(t)
	require.NotNil(t, r.store.claim(t, "default-b").NodeLostAt)

	r.nodes = listedNodes{ourNode("ip-b", "i-0b", false)} // a restarted kubelet registered it again
	r.now = testNow.Add(time.Minute)
	r.run(t)
	assert.Nil(t, r.store.claim(t, "default-b").NodeLostAt)

	r.nodes = nil
	r.now = testNow.Add(reconcile.NodeLostGrace + time.Minute)
	rep := r.run(t)
	assert.Empty(t, r.queue.sent, "gone again: the grace starts over: %s", rep)
	assert.True(t, r.now.Equal(*r.store.claim(t, "default-b").NodeLostAt))
}
