package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/mirror/mirrortest"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// condition is a mirror's condition of type typ as the API server has it, "status/reason" ("" when none).
func condition(t *testing.T, u *unstructured.Unstructured, typ string) string {
	t.Helper()
	conds, _, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	require.NoError(t, err)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return fmt.Sprintf("%v/%v", m["status"], m["reason"])
		}
	}
	return ""
}

// A disruption command's candidate shows DisruptionReason on its NodeClaim mirror as soon as the run that
// started the command ends, with no lifecycle pass in between: the disruption run, as its own identity
// (its ClusterRole, the read-only policy in force), follows the claim records it committed. The mirrors
// exist as the lifecycle left them; only the disruption run writes after that. A later write from the
// record before the command (a late writer) leaves the mirror as it is.
func TestACommandsCandidateMirrorShowsDisruptingWithoutALifecyclePass(t *testing.T) {
	w := newWorld(t, "0")
	old := w.node("old", "m5.large", "2", nil, "1500m")
	busy := w.node("busy", "m5.large", "2", nil, "1500m")
	claim := "claim-" + old
	cp := kubetest.Shared(t, kubetest.Options{})
	mirrortest.Install(t, cp)
	lifecycleMirrors := mirrortest.Writer(t, cp)
	require.Equal(t, 2, w.mirrorSync(lifecycleMirrors).Written)
	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	objects := admin.Resource(mirror.NodeClaims.Resource())
	t.Cleanup(func() { // leave the shared control plane without this test's mirrors
		for _, n := range []string{old, busy} {
			_ = objects.Delete(w.ctx, "claim-"+n, metav1.DeleteOptions{})
		}
		_, _ = lifecycleMirrors.Sync(w.ctx, nil, true)
	})
	before, err := objects.Get(w.ctx, claim, metav1.GetOptions{})
	require.NoError(t, err)
	require.Empty(t, condition(t, before, apis.ConditionTypeDisruptionReason))

	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-disruption/test"
	require.NoError(t, footprint.Grant(w.ctx, w.client, footprint.Disruption, user))
	follower, err := mirror.NewClaimFollower(cp.As(user, footprint.Disruption.Group()), "nodewright-disruption")
	require.NoError(t, err)
	w.claimMirrors = follower

	// An operator's request (`nodewright disrupt`): a forceful command, replacement first.
	asked := w.claim(claim)
	_, err = w.store.UpdateClaim(w.ctx, claim, func(c *state.Claim) error {
		c.DisruptionRequest = &state.DisruptionRequest{RequestedAt: time.Now().UTC(), By: "e2e"}
		return nil
	})
	require.NoError(t, err)
	rep, err := w.runner("", nil).Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Commands, 1, "errors: %v, rejected: %v", rep.Errors, rep.Rejected)
	assert.Equal(t, disruption.ReasonManual, rep.Commands[0].Reason)
	assert.Empty(t, rep.Errors)
	assert.Zero(t, rep.ClaimMirrorsLeft)
	assert.GreaterOrEqual(t, rep.ClaimMirrorsWritten, 2, "the candidate's mirror and its replacement's")

	marked := w.claim(claim)
	require.NotNil(t, marked.Disrupting)
	got, err := objects.Get(w.ctx, claim, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "True/"+string(disruption.ReasonManual), condition(t, got, apis.ConditionTypeDisruptionReason),
		"the candidate's mirror shows the command without any lifecycle pass")
	assert.Equal(t, strconv.FormatInt(marked.Version, 10), got.GetAnnotations()[mirror.ClaimVersionAnnotation])
	assert.Contains(t, got.GetFinalizers(), mirror.Finalizer)
	_, repl := w.replacementOf(claim)
	_, err = objects.Get(w.ctx, repl.Name, metav1.GetOptions{})
	assert.NoError(t, err, "the replacement's mirror is there too")
	t.Cleanup(func() { _ = objects.Delete(w.ctx, repl.Name, metav1.DeleteOptions{}) })

	// A writer holding the record from before the command comes late: the mirror keeps the command.
	late := follower.Follow(w.ctx, []state.Claim{asked})
	assert.Equal(t, mirror.FollowReport{Superseded: 1}, late)
	got, err = objects.Get(w.ctx, claim, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "True/"+string(disruption.ReasonManual), condition(t, got, apis.ConditionTypeDisruptionReason))

	// The same record again writes nothing.
	rv := got.GetResourceVersion()
	again := follower.Follow(w.ctx, []state.Claim{marked})
	assert.Equal(t, mirror.FollowReport{Unchanged: 1}, again)
	got, err = objects.Get(w.ctx, claim, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, rv, got.GetResourceVersion())
}
