package mirror

import (
	"slices"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// memo is what the writer knows of the mirrors in the cluster: for each, the hashes of what it holds (zero
// when unknown: someone else changed it) and the revision the writer last wrote or saw it at; and the
// revision of the whole collection its knowledge is current at (from the LIST, then the watches).
type memo struct {
	mu      sync.Mutex
	learned bool
	rv      string
	objects map[string]entry
}

type entry struct {
	hashes hashes
	rv     uint64
	// uid is the mirror's UID as the LIST or a watch reported it (empty until one has): Events about the
	// mirror name it, so `kubectl describe` finds them.
	uid types.UID
	// finalized: the mirror carries Finalizer; deleting: someone deleted it (nil when not), see finalizer.go.
	finalized bool
	deleting  *Deletion
}

func (m *memo) reset(objects map[string]entry, rv string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects, m.rv, m.learned = objects, rv, true
}

func (m *memo) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects, m.rv, m.learned = nil, "", false
}

func (m *memo) get(name string) (entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.objects[name]
	return e, ok
}

// put records what the writer knows of a mirror. A UID already known is kept when e has none, and a
// deletion once seen stays (a deleted object cannot be undeleted).
func (m *memo) put(name string, e entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.uid == "" {
		e.uid = m.objects[name].uid
	}
	if e.deleting == nil {
		e.deleting = m.objects[name].deleting
	}
	m.objects[name] = e
}

func (m *memo) remove(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, name)
}

// names are the mirrors the memo knows.
func (m *memo) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.objects))
	for n := range m.objects {
		out = append(out, n)
	}
	return out
}

// seen applies a change the watch reported (o's metadata): the writer's own writes (at or before the
// revision it recorded) change nothing; anyone else's leaves the content unknown, so it is written again.
// Whether the object carries Finalizer and is being deleted, and its UID, are taken from the metadata
// either way.
func (m *memo) seen(o *metav1.PartialObjectMetadata, deleted bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, rv := o.Name, o.ResourceVersion
	n, err := strconv.ParseUint(rv, 10, 64)
	e, known := m.objects[name]
	switch {
	case deleted:
		delete(m.objects, name)
	case err == nil && known && n <= e.rv:
		// The writer's own write, or older; a deletion it shows still counts (it is never undone), even
		// when the writer's later write hid the user's DELETE event behind its own revision.
		if o.UID != "" {
			e.uid = o.UID
		}
		if d := deletionOf(o); d != nil && e.deleting == nil {
			e.deleting = d
		}
		m.objects[name] = e
	default:
		m.objects[name] = entry{rv: n, uid: o.UID, finalized: slices.Contains(o.Finalizers, Finalizer), deleting: deletionOf(o)}
	}
	if err == nil {
		m.rv = rv
	}
}

func parseRV(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}
