package scheduling

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// A Prepared's solves all count the same running pods in their topology groups, less those of the
// nodes a solve leaves out. Counting them pod by pod made every solve of a disruption search read
// every pod of the cluster (most of a simulation at 2,000 nodes with zone spreads). existingIndex
// counts each group once per Prepared, over every node, and keeps each node's share, so a solve
// starts from those counts and takes off the shares of the nodes it leaves out.

// nodeCount is how many running pods of one class a node holds.
type nodeCount struct{ node, n int }

// groupBase is what a group counts of the running pods of every node of a Prepared: by domain, as
// topology.record counts them, and by node (index in the Prepared's nodes).
type groupBase struct {
	counts, owners         map[string]int
	total                  int
	nodeCounts, nodeOwners map[int]int
}

// existingIndex holds the running pods of a Prepared's nodes by label class and terms class (see
// nodeView), and the groupBase of each group a solve has asked for, by group id. It is safe for
// concurrent solves.
type existingIndex struct {
	byClass  [][]nodeCount
	classPod []*corev1.Pod
	byTerms  [][]nodeCount
	termsPod []*corev1.Pod
	// classOf and termsOf number the label classes and terms classes by key (labelClassKey,
	// termsKey); classPod and termsPod hold a pod of each.
	classOf, termsOf map[string]int
	// termsOn lists, per terms class, the first pod of the class on each node that has one
	// (terminal or not), in node order.
	termsOn [][]termsPod

	mu sync.Mutex
	// termsIDs are the ids of the groups each terms class owns (ownedSpecs), nil until asked;
	// termsBad marks the classes whose terms cannot be modelled (they own nothing).
	termsIDs [][]string
	termsBad []bool
	bases    map[string]*groupBase
}

// newExistingIndex returns an index with no node counted, numbering classes as prev does (nil:
// from zero), so that views read for prev keep their class numbers. Only what depends on no node
// is carried: the classes with a pod of each and the groups each terms class owns.
func newExistingIndex(prev *existingIndex) *existingIndex {
	x := &existingIndex{bases: map[string]*groupBase{}, classOf: map[string]int{}, termsOf: map[string]int{}}
	if prev == nil {
		return x
	}
	prev.mu.Lock()
	defer prev.mu.Unlock()
	x.classOf, x.termsOf = maps.Clone(prev.classOf), maps.Clone(prev.termsOf)
	x.classPod, x.termsPod = slices.Clone(prev.classPod), slices.Clone(prev.termsPod)
	x.termsIDs, x.termsBad = slices.Clone(prev.termsIDs), slices.Clone(prev.termsBad)
	return x
}

// labelClassOf numbers the label class with key, of which p is a pod.
func (x *existingIndex) labelClassOf(key []byte, p *corev1.Pod) int {
	return classNumber(x.classOf, &x.classPod, key, p)
}

// termsClassOf numbers the terms class with key, of which p is a pod.
func (x *existingIndex) termsClassOf(key []byte, p *corev1.Pod) int {
	return classNumber(x.termsOf, &x.termsPod, key, p)
}

// classNumber is key's number in ids, the next one (len(*pods), with p appended) when key is new.
func classNumber(ids map[string]int, pods *[]*corev1.Pod, key []byte, p *corev1.Pod) int {
	id, ok := ids[string(key)]
	if !ok {
		id = len(*pods)
		ids[string(key)] = id
		*pods = append(*pods, p)
	}
	return id
}

// termsPod is a pod with topology terms: its terms class, node (index) and place in the node's
// view.withTerms.
type termsPod struct {
	class, node, at int
	pod             *corev1.Pod
}

// count indexes the running pods of views (by node index) by class, and where each terms class
// first appears on each node.
func (x *existingIndex) count(views []*nodeView) {
	x.byClass, x.byTerms = make([][]nodeCount, len(x.classPod)), make([][]nodeCount, len(x.termsPod))
	x.termsOn = make([][]termsPod, len(x.termsPod))
	var classOnNode, termsOnNode []nodeCount
	for i, v := range views {
		for k, tc := range v.termsClass {
			if on := x.termsOn[tc]; len(on) == 0 || on[len(on)-1].node != i {
				x.termsOn[tc] = append(on, termsPod{class: tc, node: i, at: k, pod: v.withTerms[k]})
			}
		}
		classOnNode, termsOnNode = classOnNode[:0], termsOnNode[:0]
		for j, id := range v.class {
			classOnNode = countOn(classOnNode, id)
			if tid := v.liveTerms[j]; tid >= 0 {
				termsOnNode = countOn(termsOnNode, tid)
			}
		}
		for _, c := range classOnNode {
			x.byClass[c.node] = append(x.byClass[c.node], nodeCount{node: i, n: c.n})
		}
		for _, c := range termsOnNode {
			x.byTerms[c.node] = append(x.byTerms[c.node], nodeCount{node: i, n: c.n})
		}
	}
	x.termsIDs = append(x.termsIDs, make([][]string, len(x.termsPod)-len(x.termsIDs))...)
	x.termsBad = append(x.termsBad, make([]bool, len(x.termsPod)-len(x.termsBad))...)
}

// base is g's groupBase over nodes (the Prepared's, with their views).
func (x *existingIndex) base(g *topoGroup, nodes []ExistingNode, views []*nodeView) *groupBase {
	x.mu.Lock()
	defer x.mu.Unlock()
	if b, ok := x.bases[g.id]; ok {
		return b
	}
	b := &groupBase{counts: map[string]int{}, owners: map[string]int{}, nodeCounts: map[int]int{}, nodeOwners: map[int]int{}}
	for c, pod := range x.classPod {
		if !g.matches(pod.Namespace, pod.Labels) {
			continue
		}
		for _, nc := range x.byClass[c] {
			n := &nodes[nc.node]
			if d := existingDomain(g, n, views[nc.node]); d != "" && g.countsOn(n.Node.Spec.Taints) {
				b.counts[d] += nc.n
				b.total += nc.n
				b.nodeCounts[nc.node] += nc.n
			}
		}
	}
	for tc := range x.termsPod {
		if !x.owns(tc, g.id) {
			continue
		}
		for _, nc := range x.byTerms[tc] {
			if d := existingDomain(g, &nodes[nc.node], views[nc.node]); d != "" {
				b.owners[d] += nc.n
				b.nodeOwners[nc.node] += nc.n
			}
		}
	}
	x.bases[g.id] = b
	return b
}

// owns reports whether the pods of terms class tc own the group with id (x.mu held).
func (x *existingIndex) owns(tc int, id string) bool {
	if x.termsIDs[tc] == nil && !x.termsBad[tc] {
		specs, err := ownedSpecs(x.termsPod[tc], softTerms{})
		x.termsBad[tc] = err != nil
		x.termsIDs[tc] = []string{}
		for _, s := range specs {
			x.termsIDs[tc] = append(x.termsIDs[tc], s.id())
		}
	}
	if x.termsBad[tc] {
		return false
	}
	for _, own := range x.termsIDs[tc] {
		if own == id {
			return true
		}
	}
	return false
}

// existingDomain is the domain of g a running pod of node n is counted in (topology.record).
func existingDomain(g *topoGroup, n *ExistingNode, v *nodeView) string {
	if g.key == LabelHostname {
		return n.Node.Name
	}
	return singleValue(v.reqs, g.key)
}

// existingCounts is a Prepared solve's view of the index: the Prepared's nodes and views, and the
// nodes (indexes) the solve leaves out.
type existingCounts struct {
	index   *existingIndex
	nodes   []ExistingNode
	views   []*nodeView
	leftOut []int
}

// firstOfEachTerms returns, for each terms class with a pod on a node the solve keeps, the first
// such pod in node order (and withTerms order), sorted by that place: the order in which a walk
// over the kept nodes' views meets the classes, without the walk.
func (e *existingCounts) firstOfEachTerms() []termsPod {
	out := make([]termsPod, 0, len(e.index.termsOn))
	for _, on := range e.index.termsOn {
		for _, tp := range on {
			if _, left := slices.BinarySearch(e.leftOut, tp.node); !left {
				out = append(out, tp)
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b termsPod) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.at, b.at)) })
	return out
}

// fill sets every group of t to the counts of the running pods of the nodes the solve keeps: the
// group's base less the shares of the nodes left out. A domain whose count falls to zero is
// dropped, as if never counted.
func (e *existingCounts) fill(t *topology) {
	for _, g := range t.order {
		b := e.index.base(g, e.nodes, e.views)
		g.counts, g.owners, g.total = maps.Clone(b.counts), maps.Clone(b.owners), b.total
		for _, i := range e.leftOut {
			c, o := b.nodeCounts[i], b.nodeOwners[i]
			if c == 0 && o == 0 {
				continue
			}
			d := existingDomain(g, &e.nodes[i], e.views[i])
			if c > 0 {
				g.total -= c
				if g.counts[d] -= c; g.counts[d] == 0 {
					delete(g.counts, d)
				}
			}
			if o > 0 {
				if g.owners[d] -= o; g.owners[d] == 0 {
					delete(g.owners, d)
				}
			}
		}
		g.changed()
	}
}
