package lifecycle

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// MemoryRecorder keeps the memory capacity registered Nodes report per instance type and AMI, which
// the provisioner and consolidation plan with in place of the VM-overhead estimate; *state.Store
// satisfies it.
type MemoryRecorder interface {
	MemoryObservations(ctx context.Context) ([]state.MemoryObservation, error)
	RecordMemory(ctx context.Context, o state.MemoryObservation) (bool, error)
}

var _ MemoryRecorder = (*state.Store)(nil)

// MaxMemoryWritesPerPass bounds the observations one pass writes (a cold table beside thousands of
// Nodes of many types); the others are written by the next passes.
const MaxMemoryWritesPerPass = 50

// memoryMemo is what this process knows the table holds per (instance type, AMI): read once per
// process with one query, then kept up to date by its own writes. It only saves writes: every write is
// conditional (state.Store.RecordMemory), so a memo older than the table writes nothing wrong.
type memoryMemo struct {
	mu     sync.Mutex
	loaded bool
	known  map[string]knownMemory
}

// knownMemory is the value stored for a key, and when it was last written.
type knownMemory struct {
	bytes int64
	at    time.Time
}

// recordMemory records, for each claim whose Node registered (a Registered or Initialized claim whose
// recorded Node carries its provider id), the memory capacity the Node reports under the claim's
// instance type and the AMI it was launched from: when the pair is new, the value smaller than the
// stored one, or the same value last written over state.MemoryRefreshAfter ago (to keep it from expiring
// while such Nodes keep running). Every other pass writes nothing. Failures go into the report.
func (p *passState) recordMemory(ctx context.Context) {
	rec := p.r.deps.Memory
	if rec == nil {
		return
	}
	seen := nodeMemory(p.w, p.lifecycle)
	if len(seen) == 0 {
		return
	}
	m := &p.r.memory
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.loaded {
		stored, err := rec.MemoryObservations(ctx)
		if err != nil {
			p.fail("memory", err)
			return
		}
		m.known = make(map[string]knownMemory, len(stored))
		for _, o := range stored {
			m.known[o.Key()] = knownMemory{bytes: o.MemoryBytes, at: o.ObservedAt}
		}
		m.loaded = true
	}
	now := p.r.deps.Now()
	writes := 0
	for _, o := range seen {
		k, ok := m.known[o.Key()]
		if ok && (o.MemoryBytes > k.bytes || (o.MemoryBytes == k.bytes && now.Sub(k.at) < state.MemoryRefreshAfter)) {
			continue
		}
		if writes == MaxMemoryWritesPerPass {
			break
		}
		writes++
		written, err := rec.RecordMemory(ctx, o)
		if err != nil {
			p.fail("memory/"+o.Key(), err)
			continue
		}
		// Not written: the table holds a smaller value, or this one written within the day, by another
		// process; either way this value needs no write for a day.
		m.known[o.Key()] = knownMemory{bytes: o.MemoryBytes, at: now}
		if written {
			p.locked(func() { p.rep.MemoryRecorded++ })
		}
	}
}

// nodeMemory is the smallest memory capacity reported per (instance type, AMI) by the Nodes of the
// pass's registered and initialized claims, sorted by key. A claim counts when it records its instance
// type, its AMI and its Node, and that Node is listed with the claim's provider id (ours) and reports
// a memory capacity.
func nodeMemory(w *world, lifecycle map[string]state.Lifecycle) []state.MemoryObservation {
	byKey := map[string]state.MemoryObservation{}
	for _, c := range w.claims {
		if l := lifecycle[c.Name]; l != state.Registered && l != state.Initialized {
			continue
		}
		if c.InstanceType == "" || c.ImageID == "" || c.NodeName == "" {
			continue
		}
		n := w.nodeByName(c.NodeName)
		if n == nil || n.Spec.ProviderID == "" || n.Spec.ProviderID != c.ProviderID {
			continue
		}
		q, ok := n.Status.Capacity[corev1.ResourceMemory]
		if !ok || q.Value() <= 0 {
			continue
		}
		o := state.MemoryObservation{InstanceType: c.InstanceType, ImageID: c.ImageID, MemoryBytes: q.Value(), Node: n.Name,
			Architecture: c.Labels[scheduling.LabelArch]}
		o.NominalMiB, _ = strconv.ParseInt(c.Labels[scheduling.LabelInstanceMemory], 10, 64)
		if prev, ok := byKey[o.Key()]; !ok || o.MemoryBytes < prev.MemoryBytes {
			byKey[o.Key()] = o
		}
	}
	out := make([]state.MemoryObservation, 0, len(byKey))
	for _, o := range byKey {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}
