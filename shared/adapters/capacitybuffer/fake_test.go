package capacitybuffer

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// fakeCluster is a stateful stand-in for the API server: buffers as raw JSON, PodTemplates and
// workloads by "namespace/name", and the status writes it took.
type fakeCluster struct {
	mu        sync.Mutex
	buffers   []json.RawMessage
	more      bool
	listErr   error
	templates map[string]*corev1.PodTemplate
	workloads map[string]fakeWorkload
	readErr   error
	gets      int
	updates   map[string][]byte
	updateErr error
}

type fakeWorkload struct {
	kind     string
	template corev1.PodTemplateSpec
	replicas int32
}

func (f *fakeCluster) ListCapacityBuffers(_ context.Context, limit int64) ([]json.RawMessage, bool, error) {
	if f.listErr != nil {
		return nil, false, f.listErr
	}
	items := f.buffers
	more := f.more
	if int64(len(items)) > limit {
		items, more = items[:limit], true
	}
	return items, more, nil
}

func (f *fakeCluster) PodTemplate(_ context.Context, ns, name string) (*corev1.PodTemplate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.readErr != nil {
		return nil, f.readErr
	}
	pt, ok := f.templates[ns+"/"+name]
	if !ok {
		return nil, fmt.Errorf("PodTemplate %s/%s: %w", ns, name, kube.ErrNotFound)
	}
	return pt, nil
}

func (f *fakeCluster) Workload(_ context.Context, kind, ns, name string) (*corev1.PodTemplateSpec, int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	w, ok := f.workloads[ns+"/"+name]
	if !ok || w.kind != kind {
		return nil, 0, fmt.Errorf("%s %s/%s: %w", kind, ns, name, kube.ErrNotFound)
	}
	return &w.template, w.replicas, nil
}

func (f *fakeCluster) UpdateCapacityBufferStatus(_ context.Context, ns, name string, object []byte) error {
	if f.updateErr != nil {
		return f.updateErr
	}
	if f.updates == nil {
		f.updates = map[string][]byte{}
	}
	f.updates[ns+"/"+name] = object
	// The API server keeps the write: the next list returns it.
	for i, raw := range f.buffers {
		var b CapacityBuffer
		if json.Unmarshal(raw, &b) == nil && b.Namespace == ns && b.Name == name {
			f.buffers[i] = object
		}
	}
	return nil
}

// bufferJSON encodes a buffer named name in namespace ns with spec s (and status st).
func bufferJSON(t *testing.T, name string, s Spec, st ...Status) json.RawMessage {
	t.Helper()
	b := CapacityBuffer{TypeMeta: metav1.TypeMeta{APIVersion: Group + "/" + Version, Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", UID: types.UID("uid-team-" + name), Generation: 2, ResourceVersion: "7"},
		Spec:       s}
	if len(st) > 0 {
		b.Status = st[0]
	}
	raw, err := json.Marshal(b)
	require.NoError(t, err)
	return raw
}

// podTemplate is a template of one container requesting cpu and memory, with the scheduling fields a
// virtual pod must keep.
func podTemplate(cpu, memory string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"karpenter.sh/do-not-disrupt": "true"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"karpenter.sh/capacity-type": "on-demand"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
				WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Containers: []corev1.Container{{Name: "app", Image: "web",
				Resources:    corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "config", MountPath: "/etc/web"}}}},
		},
	}
}

func int32p(n int32) *int32 { return &n }
