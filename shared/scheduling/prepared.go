package scheduling

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Prepared is an Input whose existing nodes and in-flight claims have been read once (labels
// parsed into requirements, allocatable and bound pods' requests summed, taints and daemons
// resolved), for callers that solve many variants of one cluster: the disruption engine simulates
// each candidate as "these pods, on every node but these". Most of a Solve over a large cluster
// goes into reading the nodes; a Prepared does it once and each Solve copies the few fields a
// solve changes (room left, host ports taken, pods placed).
//
// A Prepared is not modified by its Solve calls and may be reused; it holds in, whose nodes, pods
// and pools must not change while it is in use.
type Prepared struct {
	in      Input
	daemons []*daemon
	// slots are the nodes and in-flight claims as a solve starts with them, in orderSlots' order;
	// node[i] is the index in in.Nodes of slots[i], -1 for an in-flight claim.
	slots []*nodeSlot
	node  []int
	// views are in.Nodes as setupTopology reads them, by index in in.Nodes.
	views []*nodeView
}

// nodeView is what setupTopology reads of an existing node, read once by Prepare: its labels as
// requirements, the pods that may make topology groups of their own (every pod with spread
// constraints or pod (anti-)affinity, terminal or not: groupsFor makes no group for the others),
// and the running pods with their label class (equal namespace and labels, equal class: the
// groups that select a pod depend on nothing else).
type nodeView struct {
	reqs      Requirements
	withTerms []*corev1.Pod
	live      []*corev1.Pod
	class     []int
	// liveTerms[i] says whether live[i] is among withTerms.
	liveTerms []bool
}

func newNodeViews(nodes []ExistingNode) []*nodeView {
	classes := map[string]int{}
	views := make([]*nodeView, len(nodes))
	var key []byte
	var names []string // one buffer for every pod's sorted label names
	for i, n := range nodes {
		v := &nodeView{reqs: RequirementsFromLabels(n.Node.Labels)}
		for _, p := range n.Pods {
			a := p.Spec.Affinity
			terms := len(p.Spec.TopologySpreadConstraints) > 0 || (a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil))
			if terms {
				v.withTerms = append(v.withTerms, p)
			}
			if isTerminal(p) {
				continue
			}
			v.liveTerms = append(v.liveTerms, terms)
			key = append(key[:0], p.Namespace...)
			names = names[:0]
			for k := range p.Labels {
				names = append(names, k)
			}
			slices.Sort(names)
			for _, k := range names {
				key = append(append(append(append(key, 0), k...), 0), p.Labels[k]...)
			}
			id, ok := classes[string(key)]
			if !ok {
				id = len(classes)
				classes[string(key)] = id
			}
			v.live = append(v.live, p)
			v.class = append(v.class, id)
		}
		views[i] = v
	}
	return views
}

// Prepare reads in's nodes, in-flight claims and DaemonSets for Prepared.Solve. in.Pods is
// ignored.
func Prepare(in Input) *Prepared {
	in.Pods = nil
	p := &Prepared{in: in, daemons: newDaemons(in.DaemonSets)}
	byName := poolsByName(in.NodePools)
	slots := make([]*nodeSlot, 0, len(in.Nodes)+len(in.InFlight))
	index := make([]int, 0, cap(slots))
	for i, n := range in.Nodes {
		slots = append(slots, newNodeSlot(n, byName, p.daemons))
		index = append(index, i)
	}
	for _, c := range in.InFlight {
		slots = append(slots, newInFlightSlot(c, byName, p.daemons))
		index = append(index, -1)
	}
	// The order orderSlots gives (a stable sort), applied to slots and their indexes together: a
	// subset of the nodes, sorted, is then these slots filtered, in this order.
	order := make([]int, len(slots))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		sa, sb := slots[a], slots[b]
		if sa.initialized != sb.initialized {
			if sa.initialized {
				return -1
			}
			return 1
		}
		return cmp.Compare(sa.name, sb.name)
	})
	p.slots, p.node = make([]*nodeSlot, len(order)), make([]int, len(order))
	for i, j := range order {
		p.slots[i], p.node[i] = slots[j], index[j]
	}
	p.views = newNodeViews(in.Nodes)
	return p
}

// Solve is scheduling.Solve of the prepared input with pods to place and without the existing
// nodes named in leaveOut (in-flight claims always stay): the same plan, byte for byte, as Solve
// given that Input (TestPreparedSolveMatchesSolve).
func (p *Prepared) Solve(pods []*corev1.Pod, leaveOut map[string]bool) (*Plan, error) {
	in := p.in
	in.Pods = pods
	views := p.views
	if len(leaveOut) > 0 {
		nodes := make([]ExistingNode, 0, len(in.Nodes))
		views = make([]*nodeView, 0, len(in.Nodes))
		for i, n := range in.Nodes {
			if !leaveOut[n.Node.Name] {
				nodes = append(nodes, n)
				views = append(views, p.views[i])
			}
		}
		in.Nodes = nodes
	}
	// One array holds every slot of the solve; it never grows, so the pointers stay valid.
	buf := make([]nodeSlot, 0, len(p.slots))
	slots := make([]*nodeSlot, 0, len(p.slots))
	for i, t := range p.slots {
		if j := p.node[i]; j >= 0 && leaveOut[p.in.Nodes[j].Node.Name] {
			continue
		}
		buf = append(buf, *t)
		c := &buf[len(buf)-1]
		// A solve appends to hostPorts and placed: the copy must not write into the template's arrays.
		c.hostPorts, c.placed = slices.Clip(c.hostPorts), nil
		slots = append(slots, c)
	}
	return solve(in, p.daemons, slots, views)
}
