package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestRunHonoursCSINodeLimits: the run reads the snapshot's CSINodes, so a pending pod whose EBS
// volume the roomy existing node cannot attach (its one attachment is taken) gets a new node.
func TestRunHonoursCSINodeLimits(t *testing.T) {
	snapshot := func(csi ...*storagev1.CSINode) *kube.Snapshot {
		web := pod("web", nil)
		schedulingtest.WithClaims(&web, "web-data")
		db := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}, Spec: corev1.PodSpec{NodeName: "n-1"}}
		schedulingtest.WithClaims(&db, "db-data")
		snap := pendingSnapshot(web)
		snap.Nodes = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n-1", Labels: map[string]string{corev1.LabelHostname: "n-1"}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"),
				corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}}}}
		snap.Bound = []*corev1.Pod{&db}
		for _, c := range []string{"db-data", "web-data"} {
			pvc := schedulingtest.BoundClaim(c, "pv-"+c)
			pvc.Namespace = "ns"
			snap.PVCs = append(snap.PVCs, pvc)
			snap.PVs = append(snap.PVs, schedulingtest.CSIVolume("pv-"+c, scheduling.EBSCSIDriver))
		}
		snap.CSINodes = csi
		return snap
	}
	t.Run("the node has no attachment left", func(t *testing.T) {
		w := newTestProvisioner(t, fakeCluster{snap: snapshot(schedulingtest.CSINode("n-1", map[string]int32{scheduling.EBSCSIDriver: 1}))})
		rep, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		assert.Empty(t, rep.Errors)
		require.Len(t, rep.Claims, 1)
		assert.Equal(t, 1, rep.Claims[0].Pods)
	})
	t.Run("without a CSINode the node takes the pod", func(t *testing.T) {
		w := newTestProvisioner(t, fakeCluster{snap: snapshot()})
		rep, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		assert.Empty(t, rep.Errors)
		assert.Empty(t, rep.Claims)
	})
}
