package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/mirror/mirrortest"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// A settled node's NodeClaim mirror shows Consolidatable True after a disruption run, as Karpenter's
// NodeClaim does, with no lifecycle pass in between (the run, as its own identity, follows the records
// it marked); a pod bound to a node whose NodePool's consolidateAfter has not passed since clears it; and
// a run with nothing changed writes nothing, neither a claim record nor a mirror.
func TestASettledNodesMirrorShowsConsolidatableAndAPodEventClearsIt(t *testing.T) {
	w := newWorld(t, "0") // no command: only the marks change
	a := w.node("quiet", "m5.large", "2", nil, "500m")
	b := w.node("busy", "m5.large", "2", nil, "500m")
	cp := kubetest.Shared(t, kubetest.Options{})
	mirrortest.Install(t, cp)
	lifecycleMirrors := mirrortest.Writer(t, cp)
	require.Equal(t, 2, w.mirrorSync(lifecycleMirrors).Written)
	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	objects := admin.Resource(mirror.NodeClaims.Resource())
	t.Cleanup(func() {
		for _, n := range []string{a, b} {
			_ = objects.Delete(w.ctx, "claim-"+n, metav1.DeleteOptions{})
		}
		_, _ = lifecycleMirrors.Sync(w.ctx, nil, true)
	})
	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-disruption/test"
	require.NoError(t, footprint.Grant(w.ctx, w.client, footprint.Disruption, user))
	follower, err := mirror.NewClaimFollower(cp.As(user, footprint.Disruption.Group()), "nodewright-disruption")
	require.NoError(t, err)
	w.claimMirrors = follower
	r := w.runner("", nil) // one warm function for every run below

	consolidatable := func(node string) string {
		t.Helper()
		got, err := objects.Get(w.ctx, "claim-"+node, metav1.GetOptions{})
		require.NoError(t, err)
		return condition(t, got, apis.ConditionTypeConsolidatable)
	}
	require.Empty(t, consolidatable(a))

	// consolidateAfter 0s: both initialized nodes are consolidatable at once.
	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Equal(t, 2, rep.ConsolidatableMarks)
	assert.Equal(t, 2, rep.ClaimMirrorsWritten)
	for _, n := range []string{a, b} {
		require.NotNil(t, w.claim("claim-"+n).Consolidatable, n)
		assert.Equal(t, "True/Consolidatable", consolidatable(n), "%s's mirror, without a lifecycle pass", n)
	}

	// consolidateAfter becomes an hour and a pod is bound to b: b's clock starts again, a's does not.
	w.apply(func(np *apis.NodePool, _ *apis.EC2NodeClass) { np.Spec.Disruption.ConsolidateAfter = "1h" })
	w.pod("busy-new", b, "250m", nil)
	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Equal(t, 1, rep.ConsolidatableMarks)
	assert.Nil(t, w.claim("claim-"+b).Consolidatable)
	assert.Empty(t, consolidatable(b), "a pod event inside consolidateAfter clears it")
	assert.Equal(t, "True/Consolidatable", consolidatable(a))

	// Nothing changed: no claim record and no mirror is written.
	versions := map[string]int64{}
	revisions := map[string]string{}
	for _, n := range []string{a, b} {
		versions[n] = w.claim("claim-" + n).Version
		got, err := objects.Get(w.ctx, "claim-"+n, metav1.GetOptions{})
		require.NoError(t, err)
		revisions[n] = got.GetResourceVersion()
	}
	time.Sleep(time.Second)
	rep, err = r.Run(w.ctx, "run-3")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Zero(t, rep.ConsolidatableMarks)
	assert.Zero(t, rep.ClaimMirrorsWritten)
	for _, n := range []string{a, b} {
		assert.Equal(t, versions[n], w.claim("claim-"+n).Version, "%s's record is not written", n)
		got, err := objects.Get(w.ctx, "claim-"+n, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, revisions[n], got.GetResourceVersion(), "%s's mirror is not written", n)
	}
}
