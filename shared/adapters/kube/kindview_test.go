package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// seededKinds names the objects of the other kinds seedKinds made.
type seededKinds struct {
	pvs []string
}

// seedKinds makes the other kinds a snapshot reads, as a StatefulSet-heavy cluster has them: claims
// volumes pairs in namespace ns, a PDB, a DaemonSet, a StorageClass.
func seedKinds(t *testing.T, c kubernetes.Interface, ns string, claims int) *seededKinds {
	t.Helper()
	ctx := context.Background()
	out := &seededKinds{}
	size := resource.MustParse("10Gi")
	// The claims wait for a consumer (no pod uses them), so kube-controller-manager leaves them alone.
	class, wait := ns+"-gp3", storagev1.VolumeBindingWaitForFirstConsumer
	sc, err := c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wait,
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
	})
	for i := range claims {
		claim := fmt.Sprintf("claim-%02d", i)
		_, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claim, Labels: map[string]string{"app": "db"}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &class,
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		pv := createVolume(t, c, fmt.Sprintf("%s-pv-%02d", ns, i))
		out.pvs = append(out.pvs, pv)
	}
	one := intstr.FromInt32(1)
	_, err = c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	env := []corev1.EnvVar{{Name: "SETTING", Value: "a value the agent reads at start"}}
	_, err = c.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ds": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"ds": "agent"}},
				// No Node matches, so kube-controller-manager (when another test started it) makes no pods.
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"example.com/no-such-label": "x"},
					Containers: []corev1.Container{{Name: "c", Image: "pause", Env: env}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return out
}

func createVolume(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	pv, err := c.CoreV1().PersistentVolumes().Create(context.Background(), &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: "static",
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com",
				VolumeHandle: "vol-" + name, FSType: "ext4"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	return pv.Name
}

// settle waits until kube-controller-manager (which the test runs) has done what it does to the objects
// seedKinds made: the volumes are Available, the DaemonSet's and the PDB's status observed; so they do not
// change while a test counts what a warm read costs.
func settle(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	require.Eventually(t, func() bool {
		pvs, err := c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		ds, err := c.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		require.NoError(t, err)
		pdb, err := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "db", metav1.GetOptions{})
		require.NoError(t, err)
		for _, pv := range pvs.Items {
			if strings.HasPrefix(pv.Name, ns) && pv.Status.Phase != corev1.VolumeAvailable {
				return false
			}
		}
		return ds.Status.ObservedGeneration == ds.Generation && pdb.Status.ObservedGeneration == pdb.Generation
	}, time.Minute, 100*time.Millisecond, "kube-controller-manager is done with the objects")
}

// ours keeps the names that start with prefix (the objects of one test in the shared control plane).
func ours(names []string, prefix string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, prefix) })
}

// change changes each of the other kinds: a claim deleted and one created, a volume relabelled and one
// created, the PDB deleted, a CSINode created and the namespace relabelled.
func (k *seededKinds) change(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	claims := c.CoreV1().PersistentVolumeClaims(ns)
	require.NoError(t, claims.Delete(ctx, "claim-00", metav1.DeleteOptions{}))
	_, err := claims.Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "claim-99"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.CoreV1().PersistentVolumes().Patch(ctx, k.pvs[1], "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"state":"changed"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	k.pvs = append(k.pvs, createVolume(t, c, ns+"-pv-99"))
	require.NoError(t, c.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, "db", metav1.DeleteOptions{}))
	csi, err := c.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-n2"},
		Spec:       storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "ebs.csi.aws.com", NodeID: "i-0123"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.StorageV1().CSINodes().Delete(context.Background(), csi.Name, metav1.DeleteOptions{}) })
	_, err = c.CoreV1().Namespaces().Patch(ctx, ns, "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"team":"payments"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
}

// TestTheOtherKindsAreWatchedWhenThePodsAre: the kinds read beside the pods are caught up with a watch
// whenever the pods are, however fast they list, unless their whole list is tiny (RelistBelowBytes), and
// listed again when the pods are.
func TestTheOtherKindsAreWatchedWhenThePodsAre(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	seedKinds(t, c, ns, 3)
	createPod(t, c, ns, testPod("pending", "", map[string]string{"app": "web"}), "")
	s := NewSnapshotter(c, SnapshotOptions{Namespace: ns, NodeSelector: "kindview-test=" + ns, WatchAfter: 1 << 62})

	_, err := s.Snapshot(ctx)
	require.NoError(t, err)
	warm, err := s.Snapshot(ctx)
	require.NoError(t, err)
	assert.Equal(t, ReadListed, warm.PodsRead, "pods that list fast are listed again")
	for k, mode := range warm.KindsRead {
		assert.Equal(t, ReadListed, mode, "and so is %s", k)
	}

	s.pods.listBytes = WatchAfterBytes // as if the pods' list were that large
	s.kindListBytes(RelistBelowBytes)  // and each other kind's too large to list on every run
	warm, err = s.Snapshot(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, ReadListed, warm.PodsRead, "large pods are caught up with a watch")
	require.Len(t, warm.KindsRead, 7)
	for k, mode := range warm.KindsRead {
		assert.NotEqual(t, ReadListed, mode, "and so is %s", k)
	}
}

// TestTinyKindsAreListedAgainWhileThePodsAreWatched: a kind beside the pods whose whole list is tiny is
// listed again even while the pods are caught up with a watch. Caught up instead, an unchanged kind waits
// for the API server's bookmark (one to two seconds into its watch), which made every warm provisioner
// run in a burst of pending pods that much slower than its pods' own catch-up.
func TestTinyKindsAreListedAgainWhileThePodsAreWatched(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	seedKinds(t, c, ns, 3)
	createPod(t, c, ns, testPod("pending", "", map[string]string{"app": "web"}), "")
	s := NewSnapshotter(c, SnapshotOptions{Namespace: ns, NodeSelector: "kindview-test=" + ns})

	_, err := s.Snapshot(ctx)
	require.NoError(t, err)
	s.pods.listBytes = WatchAfterBytes // as if the pods' list were large: they are caught up with a watch
	createPod(t, c, ns, testPod("pending-2", "", map[string]string{"app": "web"}), "")
	warm, err := s.Snapshot(ctx)
	require.NoError(t, err)
	assert.Equal(t, ReadWatched, warm.PodsRead, "the pods are caught up with a watch")
	require.Len(t, warm.KindsRead, 7)
	for k, mode := range warm.KindsRead {
		assert.Equal(t, ReadListed, mode, "%s lists in a few kilobytes: listed again, not caught up", k)
	}
	assert.Len(t, warm.PVCs, 3, "what was listed is all there")

	s.kindListBytes(RelistBelowBytes - 1)
	warm, err = s.Snapshot(ctx)
	require.NoError(t, err)
	for k, mode := range warm.KindsRead {
		assert.Equal(t, ReadListed, mode, "%s is still under RelistBelowBytes", k)
	}
}

// kindListBytes sets the size of the last whole list of every kind read beside the pods, as if each had
// listed that large.
func (s *Snapshotter) kindListBytes(n int64) {
	s.daemonSets.listBytes, s.pdbs.listBytes, s.pvcs.listBytes, s.pvs.listBytes = n, n, n, n
	s.storageClasses.listBytes, s.csiNodes.listBytes, s.namespaces.listBytes = n, n, n
}
