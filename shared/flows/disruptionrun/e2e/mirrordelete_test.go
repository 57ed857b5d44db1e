package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/mirror/mirrortest"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// mirrorSync writes the NodeClaim mirrors of every live claim, as the lifecycle's sweep does, and returns
// the writer's report.
func (w *world) mirrorSync(m *mirror.Writer) mirror.Report {
	w.t.Helper()
	claims, err := w.store.ListClaims(w.ctx)
	require.NoError(w.t, err)
	objs := make([]mirror.Object, 0, len(claims))
	for _, c := range claims {
		objs = append(objs, mirror.NodeClaim(mirror.Claim{Record: c, Now: time.Now()}))
	}
	rep, err := m.Sync(w.ctx, objs, true)
	require.NoError(w.t, err)
	require.Empty(w.t, rep.Errors)
	return rep
}

// drainedCondition is the Drained condition of a mirror as the API server has it ("" when it has none).
func drainedCondition(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	conds, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	require.NoError(t, err)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Drained" {
			return fmt.Sprintf("%v/%v", m["status"], m["reason"])
		}
	}
	return ""
}

// kubectl delete nodeclaims.nodewright.sh: the mirror stays Terminating; the lifecycle's sweep turns the
// deletion into the claim's disruption request; the disruption run launches the replacement first (a
// budget of "0" does not hold a deletion back, as Karpenter's budgets do not hold a manual delete) and
// hands the node to the termination flow only once the replacement is initialized; when the claim is gone
// the mirror goes. The termination flow's own steps (drain, terminate, delete the Node, claim deleted) are
// stood in for by the claim's lifecycle moves: their tests are termination's.
func TestDeletingANodeClaimMirrorReplacesItsNodeBeforeTheDrain(t *testing.T) {
	w := newWorld(t, "0")
	old := w.node("old", "m5.large", "2", nil, "1500m")
	busy := w.node("busy", "m5.large", "2", nil, "1500m")
	claim := "claim-" + old
	cp := kubetest.Shared(t, kubetest.Options{})
	mirrortest.Install(t, cp)
	mirrors := mirrortest.Writer(t, cp)
	require.Equal(t, 2, w.mirrorSync(mirrors).Written)

	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	objects := admin.Resource(mirror.NodeClaims.Resource())
	t.Cleanup(func() { // leave the shared control plane without this test's mirrors
		for _, n := range []string{old, busy} {
			_ = objects.Delete(w.ctx, "claim-"+n, metav1.DeleteOptions{})
		}
		_, _ = mirrors.Sync(w.ctx, nil, true)
	})
	require.NoError(t, objects.Delete(w.ctx, claim, metav1.DeleteOptions{}), "a user may delete a NodeClaim mirror")
	got, err := objects.Get(w.ctx, claim, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, got.GetDeletionTimestamp(), "Terminating, held by the finalizer")

	// The lifecycle's sweep: the Sync's watch brings the deletion, which becomes the claim's request.
	w.mirrorSync(mirrors)
	require.Len(t, mirrors.Deleting(), 1)
	claims, err := w.store.ListClaims(w.ctx)
	require.NoError(t, err)
	asked := lifecycle.RequestMirrorDeletions(w.ctx, w.store, nil, mirrors.Deleting(), claims, time.Now())
	require.Empty(t, asked.Errors)
	require.Equal(t, []string{claim}, asked.Requested)
	req := w.claim(claim).DisruptionRequest
	require.NotNil(t, req)
	assert.Equal(t, state.MirrorDeletionRequester, req.By)

	r := w.runner("", nil)
	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	cmd := rep.Commands[0]
	assert.Equal(t, disruption.ReasonManual, cmd.Reason)
	assert.Equal(t, disruption.MethodForceful, cmd.Method)
	assert.Equal(t, disruption.ActionReplace, cmd.Action, "its pod fits nowhere else: a replacement launches")
	require.Len(t, cmd.Nodes, 1)
	assert.Equal(t, old, cmd.Nodes[0].Name)
	assert.Empty(t, w.terminationRequests(), "nothing drains before the replacement is up")
	c, repl := w.replacementOf(claim)

	w.mirrorSync(mirrors)
	got, err = objects.Get(w.ctx, claim, metav1.GetOptions{})
	require.NoError(t, err, "the mirror stays while its claim lives")
	assert.Equal(t, "Unknown/"+mirror.DrainedAwaitingReplacement, drainedCondition(t, got), "and says what it waits for")

	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, w.terminationRequests(), "still nothing drains: the replacement has not initialized")

	w.initialize(repl.Name, "replacement-"+w.ns)
	rep, err = r.Run(w.ctx, "run-3")
	require.NoError(t, err)
	assert.Contains(t, rep.Advanced, c.ID+": terminating")
	assert.Equal(t, map[string]string{claim: string(disruption.ReasonManual)}, w.terminationRequests(),
		"the replacement is up: the node goes to the termination flow")
	assert.False(t, w.tainted(busy))

	// The termination flow drains (the mirror says so), terminates, deletes the Node and the claim.
	started := time.Now()
	_, err = w.store.UpdateClaim(w.ctx, claim, func(c *state.Claim) error {
		c.Lifecycle, c.DrainingAt, c.DisruptionReason = state.Draining, &started, string(disruption.ReasonManual)
		return nil
	})
	require.NoError(t, err)
	w.mirrorSync(mirrors)
	got, err = objects.Get(w.ctx, claim, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "Unknown/"+mirror.DrainedDraining, drainedCondition(t, got))
	for _, l := range []state.Lifecycle{state.Terminating, state.Deleted} {
		_, err = w.store.UpdateClaim(w.ctx, claim, func(c *state.Claim) error { c.Lifecycle = l; return nil })
		require.NoError(t, err)
	}
	rep2 := w.mirrorSync(mirrors)
	assert.Equal(t, 1, rep2.Deleted)
	_, err = objects.Get(w.ctx, claim, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the claim is gone: its finalizer is removed and the mirror goes: %v", err)
	assert.Empty(t, mirrors.Deleting())
}
