package termination

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestDrainedNodeWaitsBoundedForVolumeAttachments(t *testing.T) {
	w := newWorld(t, worldOptions{})
	pv := "pv-" + w.ns
	va, err := w.kube.StorageV1().VolumeAttachments().Create(w.ctx, &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "csi-" + w.ns},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: w.node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.kube.StorageV1().VolumeAttachments().Delete(w.ctx, va.Name, metav1.DeleteOptions{}) })

	w.request("Empty", nil)
	w.pumpUntil(30*time.Second, "the node to be found drained", func() bool {
		for _, k := range w.decisionKinds() {
			if k == "Drained" {
				return true
			}
		}
		return false
	})
	drainedAt := time.Now()
	assert.True(t, w.claimIs(state.Draining), "an attached volume holds the termination")
	assert.Equal(t, "running", w.instanceState())

	w.pumpUntil(30*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })
	assert.GreaterOrEqual(t, time.Since(drainedAt), 1500*time.Millisecond, "held for the bounded wait (3 s here)")
	assert.Contains(t, w.eventReasons("default", w.node), "AwaitingVolumeDetachment")
	assert.Equal(t, "terminated", w.instanceState(), "a volume that never detaches does not hold the node forever")
}
