package disruption_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestConsolidationRespectsVolumeLimits: a candidate's pod with an EBS volume is not moved onto a
// node whose CSINode allows no more EBS attachments, although it has room for the pod; the sink's
// own volume pod must count in the compact simulation too (which folds plain pods away).
func TestConsolidationRespectsVolumeLimits(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	build := func(limit int32) disruption.Input {
		sink := bigUnmanaged("sink")
		sink.Pods = []*corev1.Pod{schedulingtest.WithClaims(pod("db", "1"), "db-data")}
		sink.Pods[0].Spec.NodeName = "sink"
		web := schedulingtest.WithClaims(pod("web", "1500m"), "web-data")
		in := disruption.Input{
			Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", onDemandOnly, amd64Only)},
			Nodes:                  []disruption.Node{sink, node(small, nodeSpec{"n1", "default", "small", scheduling.CapacityTypeOnDemand, []*corev1.Pod{web}})},
			PersistentVolumeClaims: []*corev1.PersistentVolumeClaim{schedulingtest.BoundClaim("db-data", "pv-db"), schedulingtest.BoundClaim("web-data", "pv-web")},
			PersistentVolumes: []*corev1.PersistentVolume{schedulingtest.CSIVolume("pv-db", scheduling.EBSCSIDriver),
				schedulingtest.CSIVolume("pv-web", scheduling.EBSCSIDriver)},
		}
		if limit > 0 {
			in.CSINodes = []*storagev1.CSINode{schedulingtest.CSINode("sink", map[string]int32{scheduling.EBSCSIDriver: limit})}
		}
		return in
	}
	for _, full := range []bool{false, true} {
		decide := func(in disruption.Input) disruption.Result {
			if full {
				in = disruption.WithFullSimulation(in)
			}
			return disruption.Decide(in)
		}
		t.Run("a full node takes no volume", func(t *testing.T) {
			res := decide(build(1))
			assert.Empty(t, res.Commands, "full simulation %v", full)
			assert.Contains(t, keptReason(res, "n1"), "no instance type that holds the pods costs less")
		})
		t.Run("a node with an attachment left takes it", func(t *testing.T) {
			res := decide(build(2))
			require.Len(t, res.Commands, 1, "full simulation %v", full)
			assert.Equal(t, disruption.ActionDelete, res.Commands[0].Action)
			assert.Equal(t, []disruption.Move{{Pod: "default/web", To: "sink"}}, res.Commands[0].Moves)
			assert.NoError(t, disruption.Validate(res.Commands[0], build(2)))
			assert.Error(t, disruption.Validate(res.Commands[0], build(1)), "validation sees the limit reached")
		})
		t.Run("without a CSINode there is no limit", func(t *testing.T) {
			res := decide(build(0))
			require.Len(t, res.Commands, 1, "full simulation %v", full)
			assert.Equal(t, disruption.ActionDelete, res.Commands[0].Action)
		})
	}
}
