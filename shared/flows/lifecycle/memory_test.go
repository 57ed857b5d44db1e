package lifecycle

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// fakeMemory is the observed-memory partition with state.Store.RecordMemory's conditional write: a
// value is stored when new, smaller, or equal and last written over a day ago.
type fakeMemory struct {
	mu      sync.Mutex
	now     func() time.Time
	stored  map[string]state.MemoryObservation
	reads   int
	writes  []state.MemoryObservation // every RecordMemory call, written or not
	readErr error
}

func (f *fakeMemory) MemoryObservations(context.Context) ([]state.MemoryObservation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.readErr != nil {
		return nil, f.readErr
	}
	var out []state.MemoryObservation
	for _, o := range f.stored {
		out = append(out, o)
	}
	return out, nil
}

func (f *fakeMemory) RecordMemory(_ context.Context, o state.MemoryObservation) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, o)
	now := f.now()
	cur, ok := f.stored[o.Key()]
	if ok && !(cur.MemoryBytes > o.MemoryBytes || (cur.MemoryBytes == o.MemoryBytes && now.Sub(cur.ObservedAt) >= state.MemoryRefreshAfter)) {
		return false, nil
	}
	if f.stored == nil {
		f.stored = map[string]state.MemoryObservation{}
	}
	o.ObservedAt = now
	f.stored[o.Key()] = o
	return true, nil
}

// memoryNode is ourNode reporting mib of memory capacity (0: none reported).
func memoryNode(name, id string, mib int64) *corev1.Node {
	n := ourNode(name, id, false)
	if mib > 0 {
		n.Status.Capacity = corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(mib<<20, resource.BinarySI)}
	}
	return n
}

// memoryClaim is claimOn with the instance type, AMI and labels a launch records.
func memoryClaim(name string, l state.Lifecycle, instanceType, image string) state.Claim {
	c := claimOn(name, "default", l, "i-0"+name, "ip-"+name)
	c.InstanceType, c.ImageID = instanceType, image
	c.Labels = map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelInstanceMemory: "8192"}
	return c
}

// memoryRig is a rig whose passes share one runner (and so what the process remembers).
type memoryRig struct {
	*rig
	memory *fakeMemory
	runner *Runner
}

func newMemoryRig(t *testing.T, claims []state.Claim, nodes ...*corev1.Node) *memoryRig {
	r := newRig(t, claims...)
	r.store.config = configItems()[:1] // NodePool default, without the one that does not decode
	r.nodes = nodes
	for _, c := range claims {
		r.instances.list = append(r.instances.list, instance.Instance{ID: c.InstanceID, Zone: "us-east-1a",
			Tags: map[string]string{instance.TagNodeClaim: c.Name}})
	}
	m := &memoryRig{rig: r}
	m.memory = &fakeMemory{now: func() time.Time { return m.now }}
	m.runner = NewRunner(RunnerConfig{}, RunnerDeps{Store: r.store, Nodes: r.nodes, NodeActions: r.writer,
		Instances: r.instances, Terminations: r.queue, Memory: m.memory, Now: func() time.Time { return m.now }})
	return m
}

func (m *memoryRig) pass(t *testing.T) RunReport {
	t.Helper()
	rep, err := m.runner.Run(context.Background(), "run-1")
	require.NoError(t, err)
	return rep
}

func TestPassRecordsObservedMemory(t *testing.T) {
	claims := []state.Claim{
		memoryClaim("a", state.Initialized, "m5.large", "ami-1"),
		memoryClaim("b", state.Initialized, "m5.large", "ami-1"), // the same pair, less memory: the smaller stands
		memoryClaim("c", state.Registered, "m5.xlarge", "ami-1"),
		memoryClaim("d", state.Initialized, "m5.large", "ami-2"),
		memoryClaim("noimage", state.Initialized, "c5.large", ""),          // AMI unknown: nothing to key it on
		memoryClaim("nocapacity", state.Initialized, "c5.xlarge", "ami-1"), // the Node reports none yet
		memoryClaim("other", state.Initialized, "r5.large", "ami-1"),       // its Node's provider id is not the claim's
		memoryClaim("launched", state.Launched, "r5.xlarge", "ami-1"),      // not registered
	}
	claims[7].NodeName = ""
	stranger := memoryNode("ip-other", "i-0stranger", 15000)
	m := newMemoryRig(t, claims, memoryNode("ip-a", "i-0a", 7600), memoryNode("ip-b", "i-0b", 7500),
		memoryNode("ip-c", "i-0c", 15200), memoryNode("ip-d", "i-0d", 7650), memoryNode("ip-noimage", "i-0noimage", 3700),
		memoryNode("ip-nocapacity", "i-0nocapacity", 0), stranger)

	rep := m.pass(t)
	assert.Empty(t, rep.Errors)
	assert.Equal(t, 3, rep.MemoryRecorded)
	assert.Equal(t, map[string]int64{"m5.large#ami-1": 7500 << 20, "m5.xlarge#ami-1": 15200 << 20, "m5.large#ami-2": 7650 << 20},
		storedBytes(m.memory))
	b := m.memory.stored["m5.large#ami-1"]
	assert.Equal(t, "ip-b", b.Node)
	assert.Equal(t, int64(8192), b.NominalMiB)
	assert.Equal(t, "amd64", b.Architecture)
	assert.Equal(t, 1, m.memory.reads)

	t.Run("the next passes write nothing and read nothing", func(t *testing.T) {
		m.now = m.now.Add(time.Minute)
		rep := m.pass(t)
		m.now = m.now.Add(time.Minute)
		rep.add(m.pass(t))
		assert.Zero(t, rep.MemoryRecorded)
		assert.Len(t, m.memory.writes, 3, "no write per pass")
		assert.Equal(t, 1, m.memory.reads, "one query per process")
	})
	t.Run("a day later the same values are written once more, to keep them", func(t *testing.T) {
		m.now = m.now.Add(state.MemoryRefreshAfter)
		assert.Equal(t, 3, m.pass(t).MemoryRecorded)
		assert.Zero(t, m.pass(t).MemoryRecorded)
	})
	t.Run("a Node reporting less replaces the value; one reporting more does not", func(t *testing.T) {
		m.nodes[0].Status.Capacity[corev1.ResourceMemory] = *resource.NewQuantity(7400<<20, resource.BinarySI)
		m.nodes[2].Status.Capacity[corev1.ResourceMemory] = *resource.NewQuantity(15300<<20, resource.BinarySI)
		before := len(m.memory.writes)
		assert.Equal(t, 1, m.pass(t).MemoryRecorded)
		assert.Len(t, m.memory.writes, before+1, "the larger value is not even tried")
		assert.Equal(t, int64(7400)<<20, m.memory.stored["m5.large#ami-1"].MemoryBytes)
		assert.Equal(t, int64(15200)<<20, m.memory.stored["m5.xlarge#ami-1"].MemoryBytes)
	})
}

func TestPassRecordsMemoryFromWhatTheTableHolds(t *testing.T) {
	claims := []state.Claim{memoryClaim("a", state.Initialized, "m5.large", "ami-1")}
	m := newMemoryRig(t, claims, memoryNode("ip-a", "i-0a", 7600))
	m.memory.stored = map[string]state.MemoryObservation{"m5.large#ami-1": {InstanceType: "m5.large", ImageID: "ami-1",
		MemoryBytes: 7600 << 20, ObservedAt: m.now.Add(-time.Hour)}}
	m.memory.readErr = errors.New("throttled")

	rep := m.pass(t)
	assert.Contains(t, rep.Errors, "memory: throttled")
	assert.Empty(t, m.memory.writes, "nothing is written on a failed read")

	m.memory.readErr = nil
	rep = m.pass(t)
	assert.Empty(t, rep.Errors)
	assert.Empty(t, m.memory.writes, "a cold process writes nothing the table already holds")
	assert.Equal(t, 2, m.memory.reads, "the read is tried again")
}

func TestPassRecordsNoMemoryWithoutARecorder(t *testing.T) {
	r := newRig(t, memoryClaim("a", state.Initialized, "m5.large", "ami-1"))
	r.nodes = listedNodes{memoryNode("ip-a", "i-0a", 7600)}
	r.instances.list = []instance.Instance{{ID: "i-0a", Zone: "us-east-1a", Tags: map[string]string{instance.TagNodeClaim: "a"}}}
	assert.Zero(t, r.run(t).MemoryRecorded)
}

func storedBytes(f *fakeMemory) map[string]int64 {
	out := map[string]int64{}
	for k, o := range f.stored {
		out[k] = o.MemoryBytes
	}
	return out
}
