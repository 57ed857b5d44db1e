package kube

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

func testPod(name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
	}
}

func createPod(t *testing.T, c kubernetes.Interface, ns string, p *corev1.Pod, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	created, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	require.NoError(t, err)
	if phase != "" && phase != corev1.PodPending {
		created.Status.Phase = phase
		created, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	return created
}

func names[T any](items []T, name func(*T) string) []string {
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, name(&items[i]))
	}
	return out
}

func objectNames[PT metav1.Object](items []PT) []string {
	out := make([]string, 0, len(items))
	for _, o := range items {
		out = append(out, o.GetName())
	}
	return out
}

func podNames(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// TestSnapshotReadsTheClusterWhole seeds a namespace with pods in every state and the other kinds, then
// reads it with a page size of 2 so every list takes several pages.
func TestSnapshotReadsTheClusterWhole(t *testing.T) {
	_, c, ns := realCluster(t, kubetest.Options{})
	ctx := context.Background()
	run := ns // labels unique to this test's objects in the shared control plane

	for i := range 3 {
		n := kubetest.ReadyNode(t, c, fmt.Sprintf("%s-n%d", run, i), nil)
		_, err := c.CoreV1().Nodes().Patch(ctx, n, "application/merge-patch+json",
			[]byte(`{"metadata":{"labels":{"snapshot-test":"`+run+`"}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	kubetest.ReadyNode(t, c, run+"-other", nil) // not selected by the node selector

	_, err := c.CoreV1().Namespaces().Patch(ctx, ns, "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"team":"payments"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)

	app := map[string]string{"app": "web"}
	node0 := run + "-n0"
	for i := range 3 {
		createPod(t, c, ns, testPod(fmt.Sprintf("bound-%d", i), node0, app), corev1.PodRunning)
	}
	createPod(t, c, ns, testPod("bound-pending-phase", node0, app), corev1.PodPending)
	for i := range 3 {
		createPod(t, c, ns, testPod(fmt.Sprintf("pending-%d", i), "", app), "")
	}
	createPod(t, c, ns, testPod("succeeded", node0, app), corev1.PodSucceeded)
	createPod(t, c, ns, testPod("failed", node0, app), corev1.PodFailed)
	createPod(t, c, ns, testPod("pending-other-app", "", map[string]string{"app": "batch"}), "")

	one := intstr.FromInt32(1)
	for i := range 3 {
		_, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pdb-%d", i)},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: app}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = c.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ds": "agent"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"ds": "agent"}},
				// No Node matches, so kube-controller-manager (when another test started it) makes no pods.
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"example.com/no-such-label": "x"},
					Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	pv, err := c.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: run + "-pv"},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
	})
	sc, err := c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: run + "-gp3"}, Provisioner: "ebs.csi.aws.com",
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
	})
	csi, err := c.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: node0},
		Spec:       storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "ebs.csi.aws.com", NodeID: "i-0123"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.StorageV1().CSINodes().Delete(context.Background(), csi.Name, metav1.DeleteOptions{}) })

	cases := []struct {
		name        string
		opts        SnapshotOptions
		wantBound   []string
		wantPending []string
	}{
		{
			name:        "all pods of the namespace",
			opts:        SnapshotOptions{PageSize: 2, Namespace: ns, NodeSelector: "snapshot-test=" + run},
			wantBound:   []string{"bound-0", "bound-1", "bound-2", "bound-pending-phase"},
			wantPending: []string{"pending-0", "pending-1", "pending-2", "pending-other-app"},
		},
		{
			name:        "pods selected by label",
			opts:        SnapshotOptions{PageSize: 2, Namespace: ns, NodeSelector: "snapshot-test=" + run, PodSelector: "app=web"},
			wantBound:   []string{"bound-0", "bound-1", "bound-2", "bound-pending-phase"},
			wantPending: []string{"pending-0", "pending-1", "pending-2"},
		},
		{
			name:        "one big page",
			opts:        SnapshotOptions{Namespace: ns, NodeSelector: "snapshot-test=" + run, PodSelector: "app=web"},
			wantBound:   []string{"bound-0", "bound-1", "bound-2", "bound-pending-phase"},
			wantPending: []string{"pending-0", "pending-1", "pending-2"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := NewSnapshotter(c, tc.opts).Snapshot(ctx)
			require.NoError(t, err)
			assert.Equal(t, []string{run + "-n0", run + "-n1", run + "-n2"},
				names(snap.Nodes, func(n *corev1.Node) string { return n.Name }))
			assert.Equal(t, tc.wantBound, podNames(snap.Bound), "bound, non-terminal pods in listed order")
			assert.Equal(t, tc.wantPending, podNames(snap.Pending), "pending, non-terminal pods in listed order")
			assert.Equal(t, len(tc.wantBound)+len(tc.wantPending), len(snap.Bound)+len(snap.Pending))
			for _, p := range snap.Bound {
				assert.Equal(t, node0, p.Spec.NodeName)
				assert.Empty(t, p.ManagedFields, "managed fields are dropped")
			}
			assert.Equal(t, []string{"pdb-0", "pdb-1", "pdb-2"},
				objectNames(snap.PDBs))
			assert.Equal(t, []string{"agent"}, objectNames(snap.DaemonSets))
			assert.Equal(t, []string{"data"}, objectNames(snap.PVCs))
			assert.Contains(t, objectNames(snap.PVs), pv.Name)
			assert.Contains(t, objectNames(snap.StorageClasses), sc.Name)
			assert.Contains(t, objectNames(snap.CSINodes), csi.Name)
			var labels map[string]string
			for _, n := range snap.Namespaces {
				if n.Name == ns {
					labels = n.Labels
				}
			}
			assert.Equal(t, "payments", labels["team"], "every namespace with its labels, though pods are read from one")
			assert.NotEmpty(t, snap.NodesResourceVersion)
			assert.NotEmpty(t, snap.PodsResourceVersion)
		})
	}
}

func TestSnapshotIsAllOrNothing(t *testing.T) {
	for _, resource := range []string{"persistentvolumes", "namespaces"} {
		t.Run(resource, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor("list", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", fmt.Errorf("no RBAC"))
			})
			snap, err := NewSnapshotter(client, SnapshotOptions{}).Snapshot(context.Background())
			require.Error(t, err)
			assert.Nil(t, snap)
			assert.True(t, IsIncomplete(err))
			assert.True(t, IsForbidden(err))
			assert.Contains(t, err.Error(), "listing "+resource)
		})
	}
}

// TestSnapshotRestartsAnExpiredList pages pods through a reactor whose continuation expires (410), as
// after an etcd compaction, and checks the list is read again whole rather than stitched.
func TestSnapshotRestartsAnExpiredList(t *testing.T) {
	client := fake.NewClientset()
	var seen []metav1.ListOptions
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).ListOptions
		seen = append(seen, opts)
		switch {
		case opts.Limit > 0 && opts.Continue == "":
			return true, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10", Continue: "page-2"},
				Items: []corev1.Pod{*testPod("a", "n1", nil)}}, nil
		case opts.Continue != "":
			return true, nil, apierrors.NewResourceExpired("continue token expired")
		default:
			return true, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "20"},
				Items: []corev1.Pod{*testPod("a", "n1", nil), *testPod("b", "", nil), *testPod("c", "n2", nil)}}, nil
		}
	})
	snap, err := NewSnapshotter(client, SnapshotOptions{PageSize: 1}).Snapshot(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c"}, podNames(snap.Bound))
	assert.Equal(t, []string{"b"}, podNames(snap.Pending))
	assert.Equal(t, "20", snap.PodsResourceVersion)
	require.Len(t, seen, 3)
	assert.Equal(t, nonTerminalPods, seen[0].FieldSelector)
	assert.Equal(t, int64(0), seen[2].Limit, "the restart is one unpaginated list")
	assert.Equal(t, nonTerminalPods, seen[2].FieldSelector, "the restart keeps the selectors")
}
