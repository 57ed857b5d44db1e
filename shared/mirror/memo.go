package mirror

import (
	"strconv"
	"sync"

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

// put records what the writer knows of a mirror; a UID already known is kept when e has none.
func (m *memo) put(name string, e entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.uid == "" {
		e.uid = m.objects[name].uid
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

// seen applies a change the watch reported at revision rv: the writer's own writes (at or before the
// revision it recorded) change nothing; anyone else's leaves the content unknown, so it is written again.
func (m *memo) seen(name, rv string, uid types.UID, deleted bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := strconv.ParseUint(rv, 10, 64)
	e, known := m.objects[name]
	switch {
	case deleted:
		delete(m.objects, name)
	case err == nil && known && n <= e.rv:
		if uid != "" {
			e.uid = uid
			m.objects[name] = e
		}
	default:
		m.objects[name] = entry{rv: n, uid: uid}
	}
	if err == nil {
		m.rv = rv
	}
}

func parseRV(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}
