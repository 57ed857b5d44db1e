package mirrortest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// LifecycleUser is the lifecycle function's identity in tests (its role's assumed-role ARN).
const LifecycleUser = "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-lifecycle/test"

// LifecycleConfig is cp's configuration as the lifecycle function, in its group.
func LifecycleConfig(cp *kubetest.ControlPlane) *rest.Config {
	return cp.As(LifecycleUser, footprint.Lifecycle.Group())
}

// Install applies the mirror CRDs, the read-only policy and its binding as `nodewright manifests` prints
// them (leaving them be when the shared control plane has them), and waits until the CRDs are served
// and the policy refuses a cluster admin.
func Install(t testing.TB, cp *kubetest.ControlPlane) {
	t.Helper()
	ctx := context.Background()
	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	kc, err := kubernetes.NewForConfig(cp.Config)
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
	_, err = kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, footprint.MirrorPolicy(), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	_, err = kc.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, footprint.MirrorPolicyBinding(), metav1.CreateOptions{})
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
}

// Writer grants the lifecycle function's ClusterRole to LifecycleUser and returns a NodeClaim mirror
// writer acting as it, as functions/lifecycle wires one.
func Writer(t testing.TB, cp *kubetest.ControlPlane) *mirror.Writer {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cp.Config)
	require.NoError(t, err)
	require.NoError(t, footprint.Grant(context.Background(), kc, footprint.Lifecycle, LifecycleUser))
	client, err := mirror.NewClient(LifecycleConfig(cp), mirror.NodeClaims, "nodewright-lifecycle")
	require.NoError(t, err)
	return mirror.NewWriter(mirror.NodeClaims, client, mirror.Options{})
}
