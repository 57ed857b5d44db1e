package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
)

// move takes a claim to lifecycle l as another function would (the store stamps the time).
func (e *env) move(t *testing.T, name string, l state.Lifecycle, also func(*state.Claim)) state.Claim {
	t.Helper()
	c, err := e.store.UpdateClaim(context.Background(), name, func(c *state.Claim) error {
		c.Lifecycle = l
		if also != nil {
			also(c)
		}
		return nil
	})
	require.NoError(t, err)
	return c
}

// requested lists the claims and reasons on the termination queue (and takes them off).
func (e *env) requested(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, r := range e.terminationRequests(t) {
		out = append(out, r.Claim+"/"+r.Reason)
	}
	return out
}

func TestKubectlDeleteNodeDrainsThenReleasesTheNode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inst := e.launch(t, "default-del01", "default")
	e.launchedClaim(t, "default-del01", "default", inst)
	n := e.joinNode(t, "ip-10-0-2-1.ec2.internal", inst, "default")
	r := e.runner(nil)
	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Equal(t, 1, rep.Registered, rep.String())
	assert.Contains(t, e.node(t, n.Name).Finalizers, kube.TerminationFinalizer, "registration puts Nodewright's finalizer on")

	require.NoError(t, e.kube.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}), "kubectl delete node")
	require.NotNil(t, e.node(t, n.Name).DeletionTimestamp, "the finalizer holds the Node")
	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.HandedOver, rep.String())
	assert.Equal(t, []string{"default-del01/" + lifecycle.ReasonNodeDeleted}, e.requested(t))
	assert.Contains(t, e.decisions(t, "nodeclaim/default-del01"), "TerminationRequested/NodeDeleted")

	rep, err = r.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Empty(t, e.requested(t), "handed over once: %s", rep)

	// The termination flow drains and terminates; until the instance is gone, the Node stays.
	e.move(t, "default-del01", state.Draining, func(c *state.Claim) { c.DisruptionReason = lifecycle.ReasonNodeDeleted })
	e.move(t, "default-del01", state.Terminating, nil)
	rep, err = r.Run(ctx, "run-4")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.FinalizersRemoved, "a live claim's Node is the termination flow's to release: %s", rep)
	e.move(t, "default-del01", state.Deleted, nil) // as if the claim were deleted with its instance still up
	rep, err = r.Run(ctx, "run-5")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.FinalizersRemoved, "never while the instance may still run: %s", rep)
	assert.Contains(t, rep.Waiting["node/"+n.Name], "still runs")
	require.True(t, slices.Contains(e.node(t, n.Name).Finalizers, kube.TerminationFinalizer))

	require.NoError(t, instance.New(e.ec2, cluster).Terminate(ctx, inst.ID))
	rep, err = r.Run(ctx, "run-6")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.FinalizersRemoved, rep.String())
	_, err = e.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the Node is gone once its finalizer is: %v", err)
	assert.Contains(t, e.decisions(t, "node/"+n.Name), "FinalizerRemoved/InstanceGone")
}

func TestRemovedNodePoolIsHandedOverAndABrokenOneIsNot(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, c := range []struct{ name, pool string }{{"gpu-rm01", "gpu"}, {"broken-rm02", "broken"}, {"default-rm03", "default"}} {
		e.launchedClaim(t, c.name, c.pool, e.launch(t, c.name, c.pool))
	}
	_, err := e.store.PutConfig(ctx, state.ConfigItem{Kind: state.KindNodePool, Name: "broken", Spec: `{"spec": 7}`})
	require.NoError(t, err, "a NodePool whose stored manifest fails to decode")
	gpu, err := e.store.GetConfig(ctx, state.KindNodePool, "gpu")
	require.NoError(t, err)
	require.NoError(t, e.store.DeleteConfig(ctx, state.KindNodePool, "gpu", gpu.Version), "the gpu NodePool is removed")
	r := e.runner(nil)

	// A NodePool missing for a moment (a construct moved in the CDK app, a rollback) is not drained: it
	// must be missing for several passes spanning RemovedPoolWait.
	for pass := 1; pass <= lifecycle.RemovedPoolPasses; pass++ {
		rep, err := r.Run(ctx, fmt.Sprintf("run-wait-%d", pass))
		require.NoError(t, err)
		assert.Empty(t, e.requested(t), "pass %d: %s", pass, rep)
		e.clock.set(time.Duration(pass) * time.Minute)
	}
	e.clock.set(lifecycle.RemovedPoolWait)
	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, []string{"gpu-rm01/" + lifecycle.ReasonNodePoolDeleted}, e.requested(t), rep.String())
	assert.Contains(t, rep.Errors, "NodePool broken: decoding stored spec: json: cannot unmarshal number into Go struct field NodePool.spec of type apis.NodePoolSpec",
		"the broken NodePool is a problem, not a deletion")
	assert.Contains(t, e.decisions(t, "nodeclaim/gpu-rm01"), "TerminationRequested/NodePoolDeleted")
	assert.Equal(t, 1, e.claim(t, "gpu-rm01").TerminationSends)

	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, e.requested(t), "once: %s", rep)
}

func TestStalledDrainGetsANewTerminationRequest(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.clock.set(-20 * time.Minute) // its drain started 20 minutes ago, and its request was lost since
	e.launchedClaim(t, "default-stl01", "default", e.launch(t, "default-stl01", "default"))
	stalled := e.move(t, "default-stl01", state.Draining, func(c *state.Claim) { c.DisruptionReason = "Drifted" })
	e.clock.set(0)
	e.launchedClaim(t, "default-stl02", "default", e.launch(t, "default-stl02", "default"))
	e.move(t, "default-stl02", state.Draining, func(c *state.Claim) { c.DisruptionReason = "Empty" })
	r := e.runner(nil)

	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	got := e.terminationRequests(t)
	require.Len(t, got, 1, "the stalled drain only, not the fresh one: %s", rep)
	assert.Equal(t, "default-stl01", got[0].Claim)
	assert.Equal(t, "Drifted", got[0].Reason, "sent with the reason it was disrupted for")
	assert.True(t, stalled.DrainingAt.Equal(got[0].RequestedAt), "and when its drain started")
	ds, err := e.store.Decisions(ctx, "nodeclaim/default-stl01", 5)
	require.NoError(t, err)
	require.NotEmpty(t, ds)
	assert.Equal(t, "TerminationRequested", ds[0].Kind)
	assert.Equal(t, lifecycle.ReasonDrainStalled, ds[0].Reason)
	assert.Equal(t, "1", ds[0].Details["attempt"])
	assert.Contains(t, ds[0].Details["age"], "20m")

	rep, err = r.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, e.requested(t), "not again within the interval: %s", rep)
}
