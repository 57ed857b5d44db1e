package provisioning

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// fakeBuffers serves one CapacityBuffer (team/web, a PodTemplate of cpu per pod, replicas chunks) and
// keeps the status writes it takes.
type fakeBuffers struct {
	cpu      string
	replicas int32
	lists    int
	status   []capacitybuffer.Status
}

func (f *fakeBuffers) ListCapacityBuffers(context.Context, int64) ([]json.RawMessage, bool, error) {
	f.lists++
	b := capacitybuffer.CapacityBuffer{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "buffer-uid", ResourceVersion: "1"},
		Spec: capacitybuffer.Spec{PodTemplateRef: &capacitybuffer.LocalObjectRef{Name: "web"}, Replicas: &f.replicas}}
	if n := len(f.status); n > 0 {
		b.Status = f.status[n-1]
	}
	raw, err := json.Marshal(b)
	return []json.RawMessage{raw}, false, err
}

func (f *fakeBuffers) PodTemplate(_ context.Context, ns, name string) (*corev1.PodTemplate, error) {
	if ns != "team" || name != "web" {
		return nil, fmt.Errorf("PodTemplate %s/%s: %w", ns, name, kube.ErrNotFound)
	}
	return &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(f.cpu)}}}}}}}, nil
}

func (f *fakeBuffers) Workload(context.Context, string, string, string) (*corev1.PodTemplateSpec, int32, error) {
	return nil, 0, kube.ErrNotFound
}

func (f *fakeBuffers) UpdateCapacityBufferStatus(_ context.Context, _, _ string, object []byte) error {
	var b capacitybuffer.CapacityBuffer
	if err := json.Unmarshal(object, &b); err != nil {
		return err
	}
	f.status = append(f.status, b.Status)
	return nil
}

// provisioning reports the last Provisioning condition written, "" when none was.
func (f *fakeBuffers) provisioning() string {
	if len(f.status) == 0 {
		return ""
	}
	for _, c := range f.status[len(f.status)-1].Conditions {
		if c.Type == capacitybuffer.ConditionProvisioning {
			return string(c.Status) + "/" + c.Reason + ": " + c.Message
		}
	}
	return ""
}

func gateOn() *settings.Settings {
	s := settings.Default()
	s.FeatureGates.CapacityBuffer = true
	return &s
}

// A buffer whose room fits nowhere gets a claim launched for its virtual pods, and says so in its
// status; the claim records no pod of the cluster.
func TestProvisionerLaunchesForABufferThatDoesNotFit(t *testing.T) {
	ctx := context.Background()
	w := settingsWorld(t, fakeCluster{snap: pendingSnapshot()}, poolAndClass, gateOn())
	buffers := &fakeBuffers{cpu: "1", replicas: 2}
	w.p.deps.Buffers = buffers

	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	assert.Equal(t, 0, rep.PendingPods)
	assert.Equal(t, 1, rep.Buffers)
	assert.Equal(t, 2, rep.BufferPods)
	require.Len(t, rep.Claims, 1, "room is launched for the buffer")
	assert.Equal(t, 0, rep.Claims[0].Pods)
	assert.Equal(t, 2, rep.Claims[0].BufferPods)
	assert.Empty(t, rep.Claims[0].PodUIDs, "virtual pods are no pods to nominate")
	assert.Equal(t, "False/RequiresNewCapacity: 2/2 virtual pods required new capacity, 0 failed", buffers.provisioning())
	assert.Equal(t, 1, rep.BufferStatusWrites)

	// The next run finds the room on the claim in flight: nothing more is launched.
	rep, err = w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims, "the claim in flight holds the buffer's room")
	assert.Equal(t, "True/FitsExistingCapacity: All 2 virtual pods fit on existing capacity", buffers.provisioning())
}

// With the gate off no buffer is read: no list, no room, no launch.
func TestProvisionerReadsNoBufferWithTheGateOff(t *testing.T) {
	w := settingsWorld(t, fakeCluster{snap: pendingSnapshot()}, poolAndClass, nil)
	buffers := &fakeBuffers{cpu: "1", replicas: 2}
	w.p.deps.Buffers = buffers
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Zero(t, buffers.lists)
	assert.Empty(t, rep.Claims)
	assert.Zero(t, rep.BufferPods)
}

// A virtual pod no NodePool can take is told to no one: its buffer's status says it.
func TestAnUnplaceableBufferPodIsNoUnschedulablePod(t *testing.T) {
	ctx := context.Background()
	w := settingsWorld(t, fakeCluster{snap: pendingSnapshot(pod("real", nil))}, poolAndClass, gateOn())
	buffers := &fakeBuffers{cpu: "64", replicas: 1}
	w.p.deps.Buffers = buffers
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1, "the real pod gets its node")
	assert.Equal(t, 1, rep.Claims[0].Pods)
	assert.Equal(t, 0, rep.Claims[0].BufferPods)
	assert.Empty(t, rep.Unschedulable, "the buffer's pod is not reported as a pod")
	ds, err := w.store.Decisions(ctx, "pod/team/capacity-buffer-web-1", 10)
	require.NoError(t, err)
	assert.Empty(t, ds)
	assert.Equal(t, "False/RequiresNewCapacity: 0/1 virtual pods required new capacity, 1 failed", buffers.provisioning())
}
