package scalebench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// sameExceptIdentity blanks what differs between two objects written under different names at different
// times: name, uid and resourceVersion.
func sameExceptIdentity(m *metav1.ObjectMeta) {
	m.Name, m.UID, m.ResourceVersion = "", "", ""
}

// sameManagers checks that two objects name the same managers for the same operations and subresources,
// with field sets within a quarter of each other in size, and then blanks them. The API server re-encodes the field sets
// a client sends (marking owned maps and lists with "."), so the bytes are close but not equal.
func sameManagers(t *testing.T, viaAPI, viaStore []metav1.ManagedFieldsEntry) {
	t.Helper()
	require.Len(t, viaStore, len(viaAPI), "managedFields entries")
	for i := range viaAPI {
		a, s := viaAPI[i], viaStore[i]
		assert.Equal(t, []string{a.Manager, string(a.Operation), a.Subresource, a.APIVersion}, []string{s.Manager, string(s.Operation), s.Subresource, s.APIVersion}, "managedFields %d", i)
		assert.InEpsilon(t, len(a.FieldsV1.Raw), len(s.FieldsV1.Raw), 0.25, "managedFields %d: size of the field set", i)
	}
	for i := range viaAPI {
		viaAPI[i], viaStore[i] = metav1.ManagedFieldsEntry{}, metav1.ManagedFieldsEntry{}
	}
}

// TestObjectsWrittenToStorageReadBackAsThoughCreatedThroughTheAPI writes the same generated Node, pod,
// PVC and PV twice, once through the API (create, then status, as the harness did before) and once
// straight into etcd, and reads both back: the API server must serve them alike (defaults applied, status
// kept, nothing the admission chain adds missing), so that a cluster loaded through storage is the cluster
// the functions would meet.
func TestObjectsWrittenToStorageReadBackAsThoughCreatedThroughTheAPI(t *testing.T) {
	cp := kubetest.Shared(t, kubetest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan, err := NewPlan(3, smallTier, time.Now())
	require.NoError(t, err)
	store := newStorageWriter(cp.EtcdURL)
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)

	viaAPI, viaStore := plan.Node(1, fakeInstance(1)), plan.Node(1, fakeInstance(1))
	viaAPI.Name, viaStore.Name = "api-"+suffix, "store-"+suffix
	require.NoError(t, writeNode(ctx, cp.Client, viaAPI))
	require.NoError(t, store.putNode(ctx, viaStore))
	gotAPI, err := cp.Client.CoreV1().Nodes().Get(ctx, viaAPI.Name, metav1.GetOptions{})
	require.NoError(t, err)
	gotStore := getEventually(t, ctx, func() (*corev1.Node, error) {
		return cp.Client.CoreV1().Nodes().Get(ctx, viaStore.Name, metav1.GetOptions{})
	})
	sameExceptIdentity(&gotAPI.ObjectMeta)
	sameExceptIdentity(&gotStore.ObjectMeta)
	gotAPI.CreationTimestamp, gotStore.CreationTimestamp = metav1.Time{}, metav1.Time{}
	assert.Equal(t, gotAPI.Spec, gotStore.Spec, "Node spec")
	assert.Equal(t, gotAPI.Status, gotStore.Status, "Node status")
	// Through the API the status post and the taint lift rewrite the Node's entries under the loader's
	// managers; in storage the Node keeps the generator's EKS managers (kubelet, cloud controller, CSI
	// node plugin, Nodewright).
	assert.NotEmpty(t, gotStore.ManagedFields)
	gotAPI.ManagedFields, gotStore.ManagedFields = nil, nil
	assert.Equal(t, gotAPI.ObjectMeta, gotStore.ObjectMeta, "Node metadata")

	var pp PodPlan
	for _, p := range plan.Pods {
		if !p.DaemonSet && plan.Workloads[p.Workload].Volume {
			pp = p
			break
		}
	}
	require.True(t, plan.Workloads[pp.Workload].Volume, "the plan has a StatefulSet pod with a volume")
	ns := plan.Workloads[pp.Workload].Namespace
	_, err = cp.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	podAPI, podStore := plan.Pod(pp, "node-a", "10.0.0.9"), plan.Pod(pp, "node-a", "10.0.0.9")
	podAPI.Name, podStore.Name = "api-"+suffix, "store-"+suffix
	require.NoError(t, writePod(ctx, cp.Client, podAPI))
	require.NoError(t, store.putPod(ctx, podStore))
	gotPodAPI, err := cp.Client.CoreV1().Pods(ns).Get(ctx, podAPI.Name, metav1.GetOptions{})
	require.NoError(t, err)
	gotPodStore := getEventually(t, ctx, func() (*corev1.Pod, error) {
		return cp.Client.CoreV1().Pods(ns).Get(ctx, podStore.Name, metav1.GetOptions{})
	})
	sameExceptIdentity(&gotPodAPI.ObjectMeta)
	sameExceptIdentity(&gotPodStore.ObjectMeta)
	gotPodAPI.CreationTimestamp, gotPodStore.CreationTimestamp = metav1.Time{}, metav1.Time{}
	sameManagers(t, gotPodAPI.ManagedFields, gotPodStore.ManagedFields)
	assert.Equal(t, gotPodAPI.ObjectMeta, gotPodStore.ObjectMeta, "pod metadata")
	assert.Equal(t, gotPodAPI.Spec, gotPodStore.Spec, "pod spec (defaults applied alike)")
	assert.Equal(t, gotPodAPI.Status, gotPodStore.Status, "pod status")

	pvcAPI, pvAPI := Volume(ns, "api-"+suffix, "us-east-1a", "vol-a"+suffix, time.Now())
	pvcStore, pvStore := Volume(ns, "store-"+suffix, "us-east-1a", "vol-b"+suffix, time.Now())
	require.NoError(t, writeVolume(ctx, cp.Client, pvcAPI, pvAPI))
	require.NoError(t, store.putVolume(ctx, pvcStore, pvStore))
	gotPVCAPI, err := cp.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvcAPI.Name, metav1.GetOptions{})
	require.NoError(t, err)
	gotPVCStore := getEventually(t, ctx, func() (*corev1.PersistentVolumeClaim, error) {
		return cp.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, pvcStore.Name, metav1.GetOptions{})
	})
	gotPVAPI, err := cp.Client.CoreV1().PersistentVolumes().Get(ctx, pvAPI.Name, metav1.GetOptions{})
	require.NoError(t, err)
	gotPVStore := getEventually(t, ctx, func() (*corev1.PersistentVolume, error) {
		return cp.Client.CoreV1().PersistentVolumes().Get(ctx, pvStore.Name, metav1.GetOptions{})
	})
	sameManagers(t, gotPVCAPI.ManagedFields, gotPVCStore.ManagedFields)
	sameManagers(t, gotPVAPI.ManagedFields, gotPVStore.ManagedFields)
	assert.Equal(t, gotPVCAPI.Annotations, gotPVCStore.Annotations, "PVC annotations")
	assert.Equal(t, gotPVCAPI.Finalizers, gotPVCStore.Finalizers, "PVC finalizers")
	assert.Equal(t, gotPVAPI.Annotations, gotPVStore.Annotations, "PV annotations")
	assert.Equal(t, gotPVAPI.Finalizers, gotPVStore.Finalizers, "PV finalizers")
	assert.Equal(t, gotPVCAPI.Spec.VolumeName[:4], gotPVCStore.Spec.VolumeName[:4])
	gotPVCAPI.Spec.VolumeName, gotPVCStore.Spec.VolumeName = "", ""
	assert.Equal(t, gotPVCAPI.Spec, gotPVCStore.Spec, "PVC spec")
	assert.Equal(t, gotPVCAPI.Status, gotPVCStore.Status, "PVC status")
	gotPVAPI.Spec.ClaimRef.Name, gotPVAPI.Spec.ClaimRef.UID, gotPVAPI.Spec.ClaimRef.ResourceVersion = "", "", ""
	gotPVStore.Spec.ClaimRef.Name, gotPVStore.Spec.ClaimRef.UID, gotPVStore.Spec.ClaimRef.ResourceVersion = "", "", ""
	gotPVAPI.Spec.CSI.VolumeHandle, gotPVStore.Spec.CSI.VolumeHandle = "", ""
	assert.Equal(t, gotPVAPI.Spec, gotPVStore.Spec, "PV spec")
	gotPVAPI.Status.LastPhaseTransitionTime, gotPVStore.Status.LastPhaseTransitionTime = nil, nil
	assert.Equal(t, gotPVAPI.Status, gotPVStore.Status, "PV status")
}

// getEventually reads an object written to storage until the API server's watch cache has it.
func getEventually[T any](t *testing.T, ctx context.Context, get func() (T, error)) T {
	t.Helper()
	for {
		v, err := get()
		if err == nil {
			return v
		}
		if !apierrors.IsNotFound(err) || ctx.Err() != nil {
			require.NoError(t, err)
		}
		select {
		case <-ctx.Done():
			require.NoError(t, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
