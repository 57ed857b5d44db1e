package scheduling

import "maps"

// PrepareFrom is Prepare for an Input that differs from the one prev was prepared from only in its
// nodes: the same NodePools, catalog, unavailable offerings, DaemonSets, in-flight claims, volumes,
// CSINodes and namespaces (the caller's promise; they are not compared). A node that did not change (the
// same Node object, the same pods in the same order, the same NodePool, Initialized, Allocatable
// and Capacity) is not read again: its slot and view are prev's. The pools, with the narrowings
// their solves memoized, and the pod keys are prev's too. The disruption engine prepares the
// cluster again after each command of a dry run, where a command changes a few nodes of
// thousands. The plan of every Solve is the one Prepare(in) would give
// (TestPrepareFromMatchesPrepare). prev is not modified and may still be used; nil is Prepare.
//
// As with Prepare, the objects must not change while either Prepared is in use: a node whose
// labels are changed in place would keep its old view.
func PrepareFrom(prev *Prepared, in Input) *Prepared {
	if prev == nil {
		return Prepare(in)
	}
	r := &reuse{prev: prev, at: make([]int, len(in.Nodes)), slots: make([]*nodeSlot, len(prev.in.Nodes))}
	byName := make(map[string]int, len(prev.in.Nodes))
	for i, n := range prev.in.Nodes {
		byName[n.Node.Name] = i
	}
	for i, j := range prev.node {
		if j >= 0 {
			r.slots[j] = prev.slots[i]
		}
	}
	for i := range in.Nodes {
		r.at[i] = -1
		if j, ok := byName[in.Nodes[i].Node.Name]; ok && unchangedNode(&in.Nodes[i], &prev.in.Nodes[j]) {
			r.at[i] = j
		}
	}
	return prepare(in, r)
}

// reuse says which nodes of an Input prepare may take from a Prepared of the same cluster before.
type reuse struct {
	prev *Prepared
	// at[i] is the index in prev's nodes of node i when it did not change, else -1; slots are
	// prev's slot templates by index in prev's nodes.
	at    []int
	slots []*nodeSlot
}

// slot is prev's slot template for node i, nil when it must be read again.
func (r *reuse) slot(i int) *nodeSlot {
	if r == nil || r.at[i] < 0 {
		return nil
	}
	return r.slots[r.at[i]]
}

// view is prev's view of node i, nil when it must be read again.
func (r *reuse) view(i int) *nodeView {
	if r == nil || r.at[i] < 0 {
		return nil
	}
	return r.prev.views[r.at[i]]
}

// index is prev's existing index, whose class numbers the views taken from prev use.
func (r *reuse) index() *existingIndex {
	if r == nil {
		return nil
	}
	return r.prev.existing
}

// unchangedNode reports whether a and b are the same node as a solve reads it.
func unchangedNode(a, b *ExistingNode) bool {
	if a.Node != b.Node || a.NodePool != b.NodePool || a.Initialized != b.Initialized || len(a.Pods) != len(b.Pods) ||
		!sameResources(a.Allocatable, b.Allocatable) || !sameResources(a.Capacity, b.Capacity) {
		return false
	}
	for i, p := range a.Pods {
		if b.Pods[i] != p {
			return false
		}
	}
	return true
}

func sameResources(a, b Resources) bool {
	return a.CPU == b.CPU && a.Memory == b.Memory && a.EphemeralStorage == b.EphemeralStorage && a.Pods == b.Pods &&
		maps.Equal(a.Extended, b.Extended)
}
