package scheduling

import (
	corev1 "k8s.io/api/core/v1"
)

// resourceNodes is the limits key that caps a pool's node count.
const resourceNodes = "nodes"

// limits tracks what a NodePool may still launch. Only resources named in the pool's limits are capped.
type limits struct {
	set       bool
	remaining Resources
	capped    map[string]bool
}

func newLimits(l corev1.ResourceList) *limits {
	if len(l) == 0 {
		return &limits{}
	}
	out := &limits{set: true, remaining: ResourcesFromList(l), capped: map[string]bool{}}
	for name := range l {
		out.capped[string(name)] = true
	}
	return out
}

// withNode returns capacity plus one node, as the limits count it.
func withNode(capacity Resources) Resources {
	return capacity.Add(Resources{Extended: map[string]int64{resourceNodes: 1}})
}

// exceededBy names the capped resources that launching a node of this capacity would exceed.
func (l *limits) exceededBy(capacity Resources) []string {
	if !l.set {
		return nil
	}
	var out []string
	for _, name := range withNode(capacity).Exceeding(l.remaining) {
		if l.capped[name] {
			out = append(out, name)
		}
	}
	return out
}

// subtract records a launched (or existing) node of this capacity.
func (l *limits) subtract(capacity Resources) {
	if l.set {
		l.remaining = l.remaining.Sub(withNode(capacity))
	}
}

// add gives capacity back, when a reservation is replaced by a smaller one.
func (l *limits) add(capacity Resources) {
	if l.set {
		l.remaining = l.remaining.Add(withNode(capacity))
	}
}
