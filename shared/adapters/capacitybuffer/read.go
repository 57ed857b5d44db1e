package capacitybuffer

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// Bounds of one read (DESIGN.md decision 12): CapacityBuffers are a small collection an administrator
// writes, not one that grows with the cluster.
const (
	// MaxBuffers is the most CapacityBuffers a run reads: one LIST of one page of this size. A cluster
	// with more keeps room for the first MaxBuffers the API server returns (by namespace and name) and
	// the run says so in Set.Problems.
	MaxBuffers = 100
	// MaxVirtualPods is the most virtual pods a run makes from all buffers together; a buffer that
	// would pass it keeps room for what is left and the run says so.
	MaxVirtualPods = 1000
	// maxConcurrentReads bounds the GETs of templates and workloads in flight: at most one per
	// buffer, so at most MaxBuffers per run.
	maxConcurrentReads = 8
)

// Cluster is what reading buffers asks of the API server; *kube.Buffers satisfies it. Errors are
// kube's domain errors (kube.IsNotFound, kube.IsConflict).
type Cluster interface {
	ListCapacityBuffers(ctx context.Context, limit int64) ([]json.RawMessage, bool, error)
	PodTemplate(ctx context.Context, namespace, name string) (*corev1.PodTemplate, error)
	Workload(ctx context.Context, kind, namespace, name string) (*corev1.PodTemplateSpec, int32, error)
	UpdateCapacityBufferStatus(ctx context.Context, namespace, name string, object []byte) error
}

var _ Cluster = (*kube.Buffers)(nil)

// Buffer is one CapacityBuffer as a run resolved it.
type Buffer struct {
	Object *CapacityBuffer
	raw    json.RawMessage
	// Ready says the template was found and the buffer is valid: ReadyForProvisioning is True.
	// Otherwise Reason (Karpenter's) and Message say why.
	Ready           bool
	Reason, Message string
	// Replicas is how many chunks the buffer asks for (chunks), when Ready.
	Replicas int32
	// TemplateGeneration is the PodTemplate's generation, for a podTemplateRef.
	TemplateGeneration *int64
	// Pods are its virtual pods: Replicas of them, fewer when MaxVirtualPods cut them.
	Pods     []*corev1.Pod
	template *corev1.PodTemplateSpec
}

// Set is every buffer a run read.
type Set struct {
	Buffers []*Buffer
	// Problems are what the run should tell the operator (more buffers than read, pods cut).
	Problems []string
	// Unresolved names the buffers whose template could not be read for another reason than its
	// absence (a throttle, a timeout): their room is unknown, so a run that removes capacity must not
	// decide on this read.
	Unresolved []string
}

// Pods are the virtual pods of every ready buffer.
func (s *Set) Pods() []*corev1.Pod {
	if s == nil {
		return nil
	}
	var out []*corev1.Pod
	for _, b := range s.Buffers {
		out = append(out, b.Pods...)
	}
	return out
}

// Read lists the cluster's CapacityBuffers (one page of MaxBuffers), resolves each one's pod template
// (one GET of its PodTemplate or workload; buffers naming the same object share it) and makes their
// virtual pods, at most MaxVirtualPods in all. Buffers with a provisioning strategy other than
// ActiveCapacity are not Nodewright's and are left out. A cluster that does not serve the API has no
// buffers. The error is the list's; a buffer that cannot be resolved is a Buffer that is not Ready.
func Read(ctx context.Context, c Cluster) (*Set, error) {
	items, more, err := c.ListCapacityBuffers(ctx, MaxBuffers)
	if kube.IsNotFound(err) {
		return &Set{}, nil
	}
	if err != nil {
		return nil, err
	}
	set := &Set{}
	if more || len(items) > MaxBuffers {
		items = items[:min(len(items), MaxBuffers)]
		set.Problems = append(set.Problems, fmt.Sprintf("more than %d CapacityBuffers: only the first %d (by namespace and name) keep room", MaxBuffers, MaxBuffers))
	}
	for _, raw := range items {
		b := &CapacityBuffer{}
		if err := json.Unmarshal(raw, b); err != nil {
			set.Problems = append(set.Problems, fmt.Sprintf("a CapacityBuffer does not decode: %v", err))
			continue
		}
		if b.strategy() != ActiveCapacity {
			continue
		}
		set.Buffers = append(set.Buffers, &Buffer{Object: b, raw: raw})
	}
	sort.Slice(set.Buffers, func(i, j int) bool { return set.Buffers[i].Object.Key() < set.Buffers[j].Object.Key() })
	resolveAll(ctx, c, set)
	left := int32(MaxVirtualPods)
	var cut []string
	for _, b := range set.Buffers {
		if !b.Ready {
			continue
		}
		n := min(b.Replicas, left)
		if n < b.Replicas {
			cut = append(cut, fmt.Sprintf("%s (%d of %d)", b.Object.Key(), n, b.Replicas))
		}
		left -= n
		b.Pods = virtualPods(b.Object, b.template, n)
	}
	if len(cut) > 0 {
		set.Problems = append(set.Problems, fmt.Sprintf("a run keeps room for at most %d virtual pods: %d CapacityBuffers keep room for fewer chunks than they ask, the first %s",
			MaxVirtualPods, len(cut), cut[0]))
	}
	return set, nil
}
