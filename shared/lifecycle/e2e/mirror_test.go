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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/awstest"
	"github.com/nodewright/nodewright/shared/footprint"
	"github.com/nodewright/nodewright/shared/kubetest"
	"github.com/nodewright/nodewright/shared/mirror"
	"github.com/nodewright/nodewright/shared/state"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installMirrors applies the mirror CRDs, the read-only policy and its binding as `nodewright manifests`
// prints them (leaving them be when the shared control plane has them), waits until the CRDs are served
// and the policy refuses the admin, and gives the env a mirror writer acting as the lifecycle function.
func installMirrors(t *testing.T, e *env) *kubetest.ControlPlane {
	t.Helper()
	ctx := context.Background()
	cp := kubetest.Shared(t, kubetest.Options{})
	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	for _, crd := range mirror.CRDs() {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		require.NoError(t, err)
		_, err = admin.Resource(crdResource).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool {
			got, err := admin.Resource(crdResource).Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true
				}
			}
			return false
		}, 30*time.Second, 100*time.Millisecond, "CRD %s established", crd.Name)
	}
	_, err = e.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, footprint.MirrorPolicy(), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	_, err = e.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, footprint.MirrorPolicyBinding(), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	// The API server takes policies up from a watch: wait until the admin's dry-run creation is refused.
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mirror.APIVersion, "kind": "NodeClaim",
		"metadata": map[string]any{"name": "mirror-policy-probe"}}}
	require.Eventually(t, func() bool {
		_, err := admin.Resource(mirror.NodeClaims.Resource()).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err)
	}, 30*time.Second, 200*time.Millisecond, "the read-only policy is in force")

	client, err := mirror.NewClient(lifecycleConfig(cp), mirror.NodeClaims, "nodewright-lifecycle")
	require.NoError(t, err)
	e.mirrors = mirror.NewWriter(mirror.NodeClaims, client, mirror.Options{})
	return cp
}

// lifecycleConfig is the lifecycle function's identity, as newEnv grants it.
func lifecycleConfig(cp *kubetest.ControlPlane) *rest.Config {
	return cp.As("arn:aws:sts::"+awstest.AccountID+":assumed-role/nodewright-lifecycle/test", footprint.Lifecycle.Group())
}

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

	require.NoError(t, mirrors.Delete(ctx, "default-mirror1", metav1.DeleteOptions{}), "deleting a NodeClaim mirror is not refused")
	rep, err = r.Run(ctx, "run-deleted")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MirrorsWritten, "its claim lives: the mirror is written again")
	require.NotNil(t, table(t, cp)["default-mirror1"])

	_, err = e.store.UpdateClaim(ctx, "default-mirror1", func(c *state.Claim) error { c.Lifecycle = state.Deleted; return nil })
	require.NoError(t, err)
	rep, err = r.Run(ctx, "run-gone")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.MirrorsDeleted, rep.String())
	assert.Nil(t, table(t, cp)["default-mirror1"], "the mirror of a claim that is gone is deleted")
}
