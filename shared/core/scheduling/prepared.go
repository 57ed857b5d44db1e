package scheduling

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

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
	// vols are in's claims, volumes, classes and CSI volume limits, read once.
	vols *volumeIndex
	// slots are the nodes and in-flight claims as a solve starts with them, in orderSlots' order;
	// node[i] is the index in in.Nodes of slots[i], -1 for an in-flight claim.
	slots []*nodeSlot
	node  []int
	// views are in.Nodes as setupTopology reads them, by index in in.Nodes; existing indexes their
	// running pods for the topology counts (existingcounts.go).
	views    []*nodeView
	existing *existingIndex
	// pools are in's NodePools as each solve starts from them (poolState.fresh), or poolsErr why
	// they cannot be made: the catalog filtered and priced per pool once, not once per solve.
	pools    []*poolState
	poolsErr error
	// domains answers which domains the slots and pools offer, per key (prepareddomains.go); keys
	// memoizes the class key of each pod its solves place.
	domains *domainIndex
	keys    *podKeys
}

// slotBuf is the arrays of one Prepared.Solve's slots, kept in slotBufs between solves.
type slotBuf struct {
	buf  []nodeSlot
	ptrs []*nodeSlot
}

var slotBufs = sync.Pool{New: func() any { return &slotBuf{} }}

// release clears the slots (so the pool holds on to no pod or map) and returns the arrays to the
// pool.
func (b *slotBuf) release() {
	clear(b.buf[:cap(b.buf)])
	clear(b.ptrs[:cap(b.ptrs)])
	slotBufs.Put(b)
}

// preparedSolve is what one Prepared.Solve hands the solver: the pool templates, the pod keys, and
// the topology counts and domains less the nodes it leaves out.
type preparedSolve struct {
	pools   []*poolState
	keys    *podKeys
	counts  *existingCounts
	domains *preparedDomains
	// keptOff, when set, tells the pods settling slots do not take (SolveJob.Settling).
	keptOff func(*corev1.Pod) bool
}

// nodeView is what setupTopology reads of an existing node, read once by Prepare: its labels as
// requirements, the pods that may make topology groups of their own (every pod with spread
// constraints or pod (anti-)affinity, terminal or not: groupsFor makes no group for the others)
// with their terms class, and the running pods with their label class (equal namespace and labels,
// equal class: the groups that select a pod depend on nothing else).
type nodeView struct {
	reqs      Requirements
	withTerms []*corev1.Pod
	// termsClass[i] is withTerms[i]'s terms class: pods of one class own the same groups (equal
	// namespace, labels and topology terms; see termsKey), so a solve builds them once per class.
	termsClass []int
	live       []*corev1.Pod
	class      []int
	// liveTerms[i] is the terms class of live[i], -1 when it has no topology terms.
	liveTerms []int
}

// newNodeViews reads nodes for setupTopology, and indexes their running pods by class for
// existingCounts. The classes it numbers are shared by all the views. Nodes r says are unchanged
// keep the view prev read of them (r nil: none), numbered in prev's classes, which x carries on.
func newNodeViews(nodes []ExistingNode, r *reuse) ([]*nodeView, *existingIndex) {
	x := newExistingIndex(r.index())
	views := make([]*nodeView, len(nodes))
	var key, tkey []byte
	var names []string // one buffer for every pod's sorted label names
	for i, n := range nodes {
		if v := r.view(i); v != nil {
			views[i] = v
			continue
		}
		v := &nodeView{reqs: RequirementsFromLabels(n.Node.Labels)}
		for _, p := range n.Pods {
			key = labelClassKey(key[:0], p, &names)
			tid := -1
			if hasTopologyTerms(p) {
				tkey = termsKey(append(tkey[:0], key...), p)
				tid = x.termsClassOf(tkey, p)
				v.withTerms = append(v.withTerms, p)
				v.termsClass = append(v.termsClass, tid)
			}
			if isTerminal(p) {
				continue
			}
			v.liveTerms = append(v.liveTerms, tid)
			v.live = append(v.live, p)
			v.class = append(v.class, x.labelClassOf(key, p))
		}
		views[i] = v
	}
	x.count(views)
	return views, x
}

// countOn adds one pod of class id to a node's counts by class (nodeCount.node holds the class
// here).
func countOn(counts []nodeCount, id int) []nodeCount {
	for i := range counts {
		if counts[i].node == id {
			counts[i].n++
			return counts
		}
	}
	return append(counts, nodeCount{node: id, n: 1})
}

// hasTopologyTerms reports whether p has spread constraints or pod (anti-)affinity.
func hasTopologyTerms(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	return len(p.Spec.TopologySpreadConstraints) > 0 || (a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil))
}

// labelClassKey appends p's namespace and sorted labels to key; names is a reused buffer.
func labelClassKey(key []byte, p *corev1.Pod, names *[]string) []byte {
	key = append(key, p.Namespace...)
	*names = (*names)[:0]
	for k := range p.Labels {
		*names = append(*names, k)
	}
	slices.Sort(*names)
	for _, k := range *names {
		key = append(append(append(append(key, 0), k...), 0), p.Labels[k]...)
	}
	return key
}

// termsKey appends to key what groupsFor reads of p besides its namespace and labels: the spread
// constraints, the pod (anti-)affinity and, when a constraint honors taints, the tolerations, each
// in its protobuf encoding (every field, map keys sorted, no reflection: a tenth of JSON's cost).
func termsKey(key []byte, p *corev1.Pod) []byte {
	type marshaler interface{ Marshal() ([]byte, error) }
	parts := make([]marshaler, 0, len(p.Spec.TopologySpreadConstraints)+2)
	honor := false
	for i := range p.Spec.TopologySpreadConstraints {
		tsc := &p.Spec.TopologySpreadConstraints[i]
		parts = append(parts, tsc)
		honor = honor || (tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor)
	}
	key = binary.AppendUvarint(append(key, 's'), uint64(len(parts)))
	if a := p.Spec.Affinity; a != nil {
		if a.PodAffinity != nil {
			key = append(key, 'a')
			parts = append(parts, a.PodAffinity)
		}
		if a.PodAntiAffinity != nil {
			key = append(key, 'n')
			parts = append(parts, a.PodAntiAffinity)
		}
	}
	if honor {
		key = binary.AppendUvarint(append(key, 't'), uint64(len(p.Spec.Tolerations)))
		for i := range p.Spec.Tolerations {
			parts = append(parts, &p.Spec.Tolerations[i])
		}
	}
	for _, m := range parts {
		data, err := m.Marshal()
		if err != nil { // cannot happen for these types; a key of its own keeps the pod apart
			return fmt.Appendf(key, "\x00%p", p)
		}
		key = binary.AppendUvarint(append(key, 0), uint64(len(data)))
		key = append(key, data...)
	}
	return key
}

// Prepare reads in's nodes, in-flight claims and DaemonSets for Prepared.Solve. in.Pods is
// ignored.
func Prepare(in Input) *Prepared {
	return prepare(in, nil)
}

// prepare is Prepare, reading again only the nodes r does not say are unchanged (r nil: all).
func prepare(in Input, r *reuse) *Prepared {
	in.Pods = nil
	p := &Prepared{in: in}
	if r != nil {
		// the same DaemonSets, volumes and CSINodes (PrepareFrom), read once
		p.daemons, p.vols = r.prev.daemons, r.prev.vols
	} else {
		p.daemons, p.vols = newDaemons(in.DaemonSets), newVolumeIndex(in)
	}
	byName := poolsByName(in.NodePools)
	slots := make([]*nodeSlot, 0, len(in.Nodes)+len(in.InFlight))
	index := make([]int, 0, cap(slots))
	for i, n := range in.Nodes {
		slot := r.slot(i)
		if slot == nil {
			slot = newNodeSlot(n, byName, p.daemons, p.vols)
		}
		slots = append(slots, slot)
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
	p.views, p.existing = newNodeViews(in.Nodes, r)
	if r != nil {
		p.pools, p.poolsErr, p.keys = r.prev.pools, r.prev.poolsErr, r.prev.keys
	} else {
		p.pools, p.poolsErr = newPoolStates(in, p.daemons)
		for _, ps := range p.pools {
			ps.shared = &narrowings{m: map[string]*narrowing{}}
			ps.states = newClaimStates()
		}
		p.keys = &podKeys{byPod: map[*corev1.Pod]podKey{}}
	}
	p.domains = &domainIndex{slots: p.slots, pools: p.pools, byKey: map[string]*keyDomains{}}
	return p
}

// Solve is scheduling.Solve of the prepared input with pods to place and without the existing
// nodes named in leaveOut (in-flight claims always stay): the same plan, byte for byte, as Solve
// given that Input (TestPreparedSolveMatchesSolve).
func (p *Prepared) Solve(pods []*corev1.Pod, leaveOut map[string]bool) (*Plan, error) {
	return p.solveJob(SolveJob{Pods: pods, LeaveOut: leaveOut})
}

// solveJob is Solve of job's pods without its LeaveOut nodes, its Settling nodes taking only its
// Exempt pods.
func (p *Prepared) solveJob(job SolveJob) (*Plan, error) {
	pods, leaveOut := job.Pods, job.LeaveOut
	in := p.in
	in.Pods = pods
	views := p.views
	counts := &existingCounts{index: p.existing, nodes: p.in.Nodes, views: p.views}
	domains := &preparedDomains{index: p.domains}
	if len(leaveOut) > 0 {
		nodes := make([]ExistingNode, 0, len(in.Nodes))
		views = make([]*nodeView, 0, len(in.Nodes))
		for i, n := range in.Nodes {
			if !leaveOut[n.Node.Name] {
				nodes = append(nodes, n)
				views = append(views, p.views[i])
			} else {
				counts.leftOut = append(counts.leftOut, i)
			}
		}
		in.Nodes = nodes
	}
	// One array holds every slot of the solve; it never grows, so the pointers stay valid. The
	// arrays come from a pool and go back to it when the solve is done: no slot outlives its solve
	// (a plan keeps a slot's placed pods, a slice of their own), and a disruption search solves
	// thousands of times over the same nodes.
	sb := slotBufs.Get().(*slotBuf)
	defer sb.release()
	buf := slices.Grow(sb.buf[:0], len(p.slots))
	slots := slices.Grow(sb.ptrs[:0], len(p.slots))
	defer func() { sb.buf, sb.ptrs = buf, slots }()
	for i, t := range p.slots {
		if j := p.node[i]; j >= 0 && leaveOut[p.in.Nodes[j].Node.Name] {
			domains.leftOut = append(domains.leftOut, t)
			continue
		}
		buf = append(buf, *t)
		c := &buf[len(buf)-1]
		// A solve appends to hostPorts, attached and placed: the copy must not write into the
		// template's arrays.
		c.hostPorts, c.attached, c.placed = slices.Clip(c.hostPorts), slices.Clip(c.attached), nil
		c.settling = p.node[i] >= 0 && job.Settling[c.name]
		slots = append(slots, c)
	}
	if p.poolsErr != nil {
		return nil, p.poolsErr
	}
	ps := &preparedSolve{pools: p.pools, keys: p.keys, counts: counts, domains: domains}
	if len(job.Settling) > 0 {
		ps.keptOff = func(pod *corev1.Pod) bool { return !job.Exempt[pod] }
	}
	return solve(in, p.daemons, slots, views, p.vols, ps)
}
