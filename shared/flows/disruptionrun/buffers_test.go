package disruptionrun

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// fakeBuffers serves one CapacityBuffer of replicas chunks of a PodTemplate requesting cpu.
type fakeBuffers struct {
	cpu      string
	replicas int32
	lists    int
}

func (f *fakeBuffers) ListCapacityBuffers(context.Context, int64) ([]json.RawMessage, bool, error) {
	f.lists++
	raw, err := json.Marshal(capacitybuffer.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "buffer-uid"},
		Spec: capacitybuffer.Spec{PodTemplateRef: &capacitybuffer.LocalObjectRef{Name: "web"}, Replicas: &f.replicas}})
	return []json.RawMessage{raw}, false, err
}

func (f *fakeBuffers) PodTemplate(context.Context, string, string) (*corev1.PodTemplate, error) {
	return &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(f.cpu)}}}}}}}, nil
}

func (f *fakeBuffers) Workload(context.Context, string, string, string) (*corev1.PodTemplateSpec, int32, error) {
	return nil, 0, kube.ErrNotFound
}

func (f *fakeBuffers) UpdateCapacityBufferStatus(context.Context, string, string, []byte) error {
	panic("the disruption function never writes a buffer's status")
}

// bufferFixture is newFixture with a busy node (3 of 4 CPUs used), an empty one, and a buffer of one
// 2-CPU chunk, which only the empty node has room for; gate sets the CapacityBuffer gate.
func bufferFixture(t *testing.T, gate bool) (*fixture, *fakeBuffers) {
	f := newFixture(t, "100%")
	f.node("busy", "medium", "3")
	f.node("empty", "medium")
	s := settings.Default()
	s.FeatureGates.CapacityBuffer = gate
	f.launch.settings = s
	b := &fakeBuffers{cpu: "2", replicas: 1}
	f.runner.deps.Buffers = b
	f.runner.cfg.MaxCommands = 1
	return f, b
}

// Without the gate the empty node is deleted (the buffer is not read); with it, the node holds the
// buffer's room, is not empty, and is not handed to termination: its room must be found again first.
func TestConsolidationKeepsTheRoomOfACapacityBuffer(t *testing.T) {
	off, offBuffers := bufferFixture(t, false)
	rep := off.run()
	require.Len(t, rep.Commands, 1)
	assert.Equal(t, disruption.ReasonEmpty, rep.Commands[0].Reason)
	assert.Contains(t, off.terms.claims(), "claim-empty")
	assert.Zero(t, offBuffers.lists, "the gate off reads no buffer")

	on, onBuffers := bufferFixture(t, true)
	rep = on.run()
	assert.Positive(t, onBuffers.lists)
	for _, c := range rep.Commands {
		assert.NotEqual(t, disruption.ReasonEmpty, c.Reason, "a node holding buffer room is not empty")
	}
	assert.NotContains(t, on.terms.claims(), "claim-empty", "the buffer's room is not removed")
}

// placeBufferPods binds a virtual pod to the first node with room and leaves the rest pending.
func TestBufferPodsArePlacedOnExistingRoomOrPending(t *testing.T) {
	f, _ := bufferFixture(t, true)
	w := f.runner.read(context.Background(), nil, nil)
	require.Empty(t, w.input.Incomplete)
	var onEmpty []*corev1.Pod
	for _, n := range w.input.Nodes {
		if n.Name() == "empty" {
			onEmpty = n.Pods
		}
	}
	require.Len(t, onEmpty, 1, "the 2-CPU chunk fits only the empty node")
	assert.True(t, scheduling.IsBufferPod(onEmpty[0]))
	assert.Equal(t, "empty", onEmpty[0].Spec.NodeName)
	assert.Empty(t, w.input.PendingPods)

	big := &fakeBuffers{cpu: "8", replicas: 1}
	f.runner.deps.Buffers, f.runner.buffers = big, bufferRead{}
	w = f.runner.read(context.Background(), nil, nil)
	require.Len(t, w.input.PendingPods, 1, "no room anywhere: pending, simulated with what moves")
	assert.True(t, scheduling.IsBufferPod(w.input.PendingPods[0]))
}
