package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/mirror/mirrortest"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// installMirrors installs the mirrors (mirrortest.Install) and gives the env a mirror writer acting as
// the lifecycle function.
func installMirrors(t *testing.T, e *env) *kubetest.ControlPlane {
	t.Helper()
	cp := kubetest.Shared(t, kubetest.Options{})
	mirrortest.Install(t, cp)
	e.mirrors = mirrortest.Writer(t, cp)
	return cp
}

// lifecycleConfig is the lifecycle function's identity, as newEnv grants it.
func lifecycleConfig(cp *kubetest.ControlPlane) *rest.Config { return mirrortest.LifecycleConfig(cp) }

// table reads the NodeClaim mirrors as `kubectl get` does (a Table request) and returns, for each row,
// its cells by column name.
func table(t *testing.T, cp *kubetest.ControlPlane) map[string]map[string]any {
	t.Helper()
	hc, err := rest.HTTPClientFor(cp.Config)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, cp.Config.Host+"/apis/nodewright.sh/v1/nodeclaims?includeObject=None", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	var tab metav1.Table
	require.NoError(t, json.Unmarshal(body, &tab))
	out := map[string]map[string]any{}
	for _, row := range tab.Rows {
		cells := map[string]any{}
		for i, col := range tab.ColumnDefinitions {
			cells[col.Name] = row.Cells[i]
		}
		out[fmt.Sprint(cells["Name"])] = cells
	}
	return out
}

func TestNodeClaimMirrorShowsTheNodeAndIsReadOnlyToUsers(t *testing.T) {
	e := newEnv(t)
	cp := installMirrors(t, e)
	ctx := context.Background()
	inst := e.launch(t, "default-mirror1", "default")
	e.launchedClaim(t, "default-mirror1", "default", inst)
	r := e.runner(nil)

	rep, err := r.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MirrorsWritten, rep.String())
	row := table(t, cp)["default-mirror1"]
	require.NotNil(t, row, "the launched claim has its mirror")
	assert.Equal(t, "False", row["Ready"], "launched, not registered")
	assert.Equal(t, "m5.large", row["Type"])
	assert.Equal(t, zone, row["Zone"])
	assert.Equal(t, "on-demand", row["Capacity"])
	assert.Empty(t, row["Node"])

	node := e.joinNode(t, "ip-10-0-3-17.ec2.internal", inst, "default")
	for i := 2; e.claim(t, "default-mirror1").Lifecycle != state.Initialized; i++ {
		require.Less(t, i, 6, "the Node is registered and initialized within a few passes")
		rep, err = r.Run(ctx, fmt.Sprintf("run-%d", i))
		require.NoError(t, err)
		require.Empty(t, rep.Errors)
	}
	row = table(t, cp)["default-mirror1"]
	require.NotNil(t, row)
	assert.Equal(t, node.Name, row["Node"], "NODE column")
	assert.Equal(t, "True", row["Ready"], "READY column")

	rep, err = r.Run(ctx, "run-steady")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.MirrorsWritten, "nothing changed: nothing written")

	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	mirrors := admin.Resource(mirror.NodeClaims.Resource())
	_, err = mirrors.Patch(ctx, "default-mirror1", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"b"}}}`), metav1.PatchOptions{})
	require.True(t, apierrors.IsForbidden(err), "a cluster admin outside the functions' group cannot change a mirror: %v", err)
	assert.Contains(t, err.Error(), "read-only mirrors")
	_, err = mirrors.Patch(ctx, "default-mirror1", types.MergePatchType, []byte(`{"spec":{"expireAfter":"1h"}}`), metav1.PatchOptions{})
	require.True(t, apierrors.IsForbidden(err), "nor its spec: %v", err)
	_, err = mirrors.Patch(ctx, "default-mirror1", types.MergePatchType, []byte(`{"status":{"nodeName":"x"}}`), metav1.PatchOptions{}, "status")
	require.True(t, apierrors.IsForbidden(err), "nor its status: %v", err)

	fn, err := dynamic.NewForConfig(lifecycleConfig(cp))
	require.NoError(t, err)
	_, err = fn.Resource(mirror.NodeClaims.Resource()).Patch(ctx, "default-mirror1", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"b"}}}`), metav1.PatchOptions{})
	require.NoError(t, err, "the functions' identity may")
	rep, err = r.Run(ctx, "run-drifted")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MirrorsWritten, "the changed mirror is written back")
	got, err := mirrors.Get(ctx, "default-mirror1", metav1.GetOptions{})
	require.NoError(t, err)
	assert.NotContains(t, got.GetLabels(), "team")

	_, err = mirrors.Patch(ctx, "default-mirror1", types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
	require.True(t, apierrors.IsForbidden(err), "nor strip its finalizer: %v", err)

	require.NoError(t, mirrors.Delete(ctx, "default-mirror1", metav1.DeleteOptions{}), "deleting a NodeClaim mirror is not refused")
	got, err = mirrors.Get(ctx, "default-mirror1", metav1.GetOptions{})
	require.NoError(t, err, "the finalizer holds the deleted mirror")
	require.NotNil(t, got.GetDeletionTimestamp(), "Terminating")
	assert.Equal(t, []string{mirror.Finalizer}, got.GetFinalizers())
	_, err = mirrors.Patch(ctx, "default-mirror1", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.True(t, apierrors.IsForbidden(err), "a deleted mirror's finalizer is not the user's to strip either: %v", err)

	rep, err = r.Run(ctx, "run-deleted")
	require.NoError(t, err)
	assert.Equal(t, []string{"default-mirror1"}, rep.DeletionsRequested, rep.String())
	req := e.claim(t, "default-mirror1").DisruptionRequest
	require.NotNil(t, req, "the deletion is the claim's disruption request")
	assert.Equal(t, state.MirrorDeletionRequester, req.By)
	assert.WithinDuration(t, got.GetDeletionTimestamp().Time, req.RequestedAt, time.Second, "dated by the deletion")
	assert.Contains(t, e.decisions(t, "nodeclaim/default-mirror1"), lifecycle.KindMirrorDeleted+"/"+string(lifecycle.ReasonMirrorDeleted))
	require.Eventually(t, func() bool {
		evs, err := e.kube.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=NodeClaim,involvedObject.name=default-mirror1,involvedObject.uid=" + string(got.GetUID())})
		return err == nil && len(evs.Items) == 1 && evs.Items[0].Reason == string(lifecycle.ReasonMirrorDeleted)
	}, 10*time.Second, 100*time.Millisecond, "an Event on the mirror, where kubectl describe finds it")

	rep, err = r.Run(ctx, "run-requested")
	require.NoError(t, err)
	assert.Empty(t, rep.DeletionsRequested, "asked once")
	got, err = mirrors.Get(ctx, "default-mirror1", metav1.GetOptions{})
	require.NoError(t, err, "the mirror stays while its claim lives")
	assert.Contains(t, fmt.Sprint(got.Object["status"]), "AwaitingReplacement", "its Drained condition says what it waits for")

	_, err = e.store.UpdateClaim(ctx, "default-mirror1", func(c *state.Claim) error { c.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)
	rep, err = r.Run(ctx, "run-gone")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MirrorsDeleted, rep.String())
	_, err = mirrors.Get(ctx, "default-mirror1", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the claim is gone: the finalizer is removed and the mirror goes: %v", err)

	// A mirror no one deleted goes at once when its claim is gone (finalizer first, then the object).
	inst2 := e.launch(t, "default-mirror2", "default")
	e.launchedClaim(t, "default-mirror2", "default", inst2)
	_, err = r.Run(ctx, "run-2nd")
	require.NoError(t, err)
	require.NotNil(t, table(t, cp)["default-mirror2"])
	_, err = e.store.UpdateClaim(ctx, "default-mirror2", func(c *state.Claim) error { c.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)
	rep, err = r.Run(ctx, "run-2nd-gone")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MirrorsDeleted, rep.String())
	assert.Nil(t, table(t, cp)["default-mirror2"], "the mirror of a claim that is gone is deleted")
}
