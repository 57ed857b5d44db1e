package mirror

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestNodeClaimMirrorsCarryTheFinalizer(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	_, err := w.Sync(ctx, claims(2), true)
	require.NoError(t, err)
	assert.Equal(t, []string{Finalizer}, api.objects["default-00000"].finalizers)
	assert.Equal(t, "nodewright.sh/termination", Finalizer, "the same finalizer as Nodewright's Nodes carry")

	// A mirror written before the finalizer was (its hash left it out) is written once more, with it.
	old := NodeClaim(initializedClaim(1))
	old.Finalizers = nil
	h, err := hashOf(old)
	require.NoError(t, err)
	api.objects["default-00001"].finalizers = nil
	api.objects["default-00001"].annotations[HashAnnotation] = h.String()
	cold := NewWriter(NodeClaims, api, Options{})
	rep, err := cold.Sync(ctx, claims(2), true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Written, "only the mirror without the finalizer")
	assert.Equal(t, []string{Finalizer}, api.objects["default-00001"].finalizers)
}

func TestADeletedMirrorStaysUntilItsClaimIsGone(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	objs := claims(3)
	_, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Empty(t, w.Deleting())

	api.userDelete("default-00001")
	require.Contains(t, api.objects, "default-00001", "the finalizer holds it: Terminating")
	api.resetCounts()
	rep, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Equal(t, 0, api.deletes+api.releases, "its claim lives: the finalizer stays")
	assert.Empty(t, rep.Errors)
	want := []Deletion{{Name: "default-00001", UID: types.UID("uid-default-00001"), Since: t0.Add(5 * time.Hour)}}
	assert.Equal(t, want, w.Deleting(), "the watch brought the deletion")

	rep, err = w.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Written, "settled: nothing more is written")
	assert.Equal(t, want, w.Deleting())

	cold := NewWriter(NodeClaims, api, Options{})
	_, err = cold.Sync(ctx, objs, true)
	require.NoError(t, err)
	assert.Equal(t, want, cold.Deleting(), "a cold start learns the deletion from the LIST")

	api.resetCounts()
	rep, err = w.Sync(ctx, []Object{objs[0], objs[2]}, true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Deleted)
	assert.Equal(t, 1, api.releases, "the claim is gone: the finalizer is removed")
	assert.Equal(t, 0, api.deletes, "the user's DELETE stands: no second one")
	assert.NotContains(t, api.objects, "default-00001", "and the mirror goes")
	assert.Empty(t, w.Deleting())
}

func TestTheMirrorOfAGoneClaimIsReleasedThenDeleted(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	objs := claims(2)
	_, err := w.Sync(ctx, objs, true)
	require.NoError(t, err)

	api.failNext["release"] = fmt.Errorf("connection reset")
	rep, err := w.Sync(ctx, objs[:1], true)
	require.NoError(t, err)
	assert.Equal(t, []string{"nodeclaim/default-00001: removing the nodewright.sh/termination finalizer: connection reset"}, rep.Errors)
	assert.Equal(t, 0, api.deletes, "not deleted while it holds the finalizer: it would only hang Terminating")

	rep, err = w.Sync(ctx, objs[:1], true)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Deleted, "the next run tries again")
	assert.NotContains(t, api.objects, "default-00001")
}

func TestARequestedClaimSaysWhatHoldsItsRemoval(t *testing.T) {
	grace := 30 * time.Minute
	asked := initializedClaim(0)
	asked.Record.TerminationGracePeriod = &grace
	asked.Record.DisruptionRequest = &state.DisruptionRequest{Reason: "its NodeClaim mirror was deleted", RequestedAt: t0.Add(4 * time.Hour),
		By: state.MirrorDeletionRequester}
	d := condition(t, NodeClaim(asked), apis.ConditionTypeDrained)
	assert.Equal(t, "Unknown", string(d.Status))
	assert.Equal(t, DrainedAwaitingReplacement, d.Reason)
	assert.Contains(t, d.Message, "disruption requested by kubectl delete nodeclaims.nodewright.sh at 2026-11-01T14:00:00Z")
	assert.Contains(t, d.Message, "replacement capacity for its pods first")
	assert.Contains(t, d.Message, "karpenter.sh/do-not-disrupt")
	assert.Contains(t, d.Message, "terminationGracePeriod (30m0s)")

	draining := asked
	started := t0.Add(5 * time.Hour)
	draining.Lifecycle, draining.Record.DrainingAt, draining.Record.DisruptionReason = state.Draining, &started, "Manual"
	d = condition(t, NodeClaim(draining), apis.ConditionTypeDrained)
	assert.Equal(t, DrainedDraining, d.Reason)
	assert.Contains(t, d.Message, "until its terminationGracePeriod (30m0s) ends at 2026-11-01T15:30:00Z")
	assert.Equal(t, "Manual", condition(t, NodeClaim(draining), apis.ConditionTypeDisruptionReason).Reason)

	noGrace := draining
	noGrace.Record.TerminationGracePeriod = nil
	assert.Contains(t, condition(t, NodeClaim(noGrace), apis.ConditionTypeDrained).Message, "for as long as they stay")

	terminating := draining
	terminating.Lifecycle = state.Terminating
	assert.Equal(t, "True", string(condition(t, NodeClaim(terminating), apis.ConditionTypeDrained).Status))

	assert.False(t, hasCondition(NodeClaim(initializedClaim(0)), apis.ConditionTypeDrained), "no request, nothing to say")
}

// A write of the mirror after the user's DELETE (between sweeps, a status change) takes a later revision
// than the DELETE's own event; the deletion is still noticed.
func TestADeletionIsNoticedPastTheWritersOwnLaterWrite(t *testing.T) {
	ctx := context.Background()
	api := newFakeAPI()
	w := NewWriter(NodeClaims, api, Options{})
	_, err := w.Sync(ctx, claims(1), true)
	require.NoError(t, err)

	api.userDelete("default-00000")
	draining := initializedClaim(0)
	draining.Lifecycle, draining.Record.DisruptionReason = state.Draining, "Manual"
	rep, err := w.Sync(ctx, []Object{NodeClaim(draining)}, false)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Written, "a pass between sweeps writes the change, over the deleted mirror")
	assert.Empty(t, w.Deleting(), "not seen yet: no watch between sweeps")

	_, err = w.Sync(ctx, []Object{NodeClaim(draining)}, true)
	require.NoError(t, err)
	require.Len(t, w.Deleting(), 1, "the sweep's watch shows it")
	assert.Equal(t, "default-00000", w.Deleting()[0].Name)
}
