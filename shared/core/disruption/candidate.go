package disruption

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Kept is a node that is not a candidate for disruption in this run, and why.
type Kept struct {
	Node     string `json:"node"`
	NodePool string `json:"nodePool,omitempty"`
	Reason   string `json:"reason"`
	// BudgetBlocked is set when only the NodePool's disruption budget kept the node: it was a candidate.
	BudgetBlocked bool `json:"budgetBlocked,omitempty"`
}

// candidate is a node consolidation may remove.
type candidate struct {
	node *Node
	pool NodePool
	// pods are the pods that must move elsewhere (reschedulable).
	pods []*corev1.Pod
	// cost is RescheduleDisruptionCost of pods; requests sums their CPU and memory requests.
	cost     float64
	requests room
	// buffered says a CapacityBuffer's virtual pod keeps room on the node (scheduling.IsBufferPod).
	buffered bool
	// unfit caches pruner.unfit.
	unfit *room
	// noReplace is set by the churn guard: the node was itself launched as a replacement within
	// its pool's consolidateAfter, so it may be deleted but not replaced.
	noReplace bool
	// unconsolidatable says why consolidation may not take the node ("" when it may); such a node
	// is a candidate only because it drifted.
	unconsolidatable string
	// podBlock says which pod keeps voluntary disruption off the node (do-not-disrupt, a PDB); ""
	// when none does. Only drift of a claim with a terminationGracePeriod passes it (eventual).
	podBlock string
}

// consolidatable reports whether consolidation (empty, multi-node, single-node) may take the node.
func (c *candidate) consolidatable() bool { return c.unconsolidatable == "" }

// drifted reports whether the node's claim has drifted.
func (c *candidate) drifted() bool { return c.node.Drifted != "" }

func (c *candidate) name() string { return c.node.Name() }

// empty reports whether the node is empty as Karpenter counts it (its IsEmpty): moving its pods
// adds nothing to the node's base disruption cost, so it holds no reschedulable pod or only pods
// whose eviction cost is zero or less (a pod-deletion-cost or priority low enough, cost.go). Such
// pods are drained with the node, like any other; nothing is launched for them first. A node that keeps a
// CapacityBuffer's room is never empty (Karpenter's emptiness skips nodes hosting buffer pods), though a
// virtual pod's lowest priority makes its eviction cost nothing.
func (c *candidate) empty() bool { return c.cost <= baseDisruptionCost && !c.buffered }

// noPods reports whether no reschedulable pod is left on the node: drift's "empty first", which
// Karpenter decides by this and not by empty's cost.
func (c *candidate) noPods() bool { return len(c.pods) == 0 }

// freePods counts the candidate's pods whose eviction costs nothing (EvictionCost ≤ 0).
func (c *candidate) freePods() int {
	n := 0
	for _, p := range c.pods {
		if EvictionCost(p) <= 0 {
			n++
		}
	}
	return n
}

// findCandidates returns the nodes consolidation may remove, in consolidation order (price per
// disruption cost, highest first), and a reason for each other node.
func findCandidates(in *Input, pools map[string]NodePool, pdb *pdbs) ([]*candidate, []Kept) {
	var out []*candidate
	var kept []Kept
	for i := range in.Nodes {
		n := &in.Nodes[i]
		c, reason := judgeCandidate(in, n, pools, pdb)
		if reason != "" {
			kept = append(kept, Kept{Node: n.Name(), NodePool: n.NodePool, Reason: reason})
			continue
		}
		out = append(out, c)
	}
	sortCandidates(out)
	slices.SortFunc(kept, func(a, b Kept) int { return cmp.Compare(a.Node, b.Node) })
	return out, kept
}

// judgeCandidate returns node n as a candidate, or the reason it is kept. It reads n, its pods, its
// pool and the PDBs only, so a caller that needs a few nodes judged (Validate) judges just those.
func judgeCandidate(in *Input, n *Node, pools map[string]NodePool, pdb *pdbs) (*candidate, string) {
	c, reason := newCandidate(in.Now, n, pools, pdb, in.Options.pods)
	if reason != "" {
		return nil, reason
	}
	c.unconsolidatable = consolidationBlock(in.Now, c)
	if c.podBlock != "" {
		// Only Karpenter's eventual disruption gets here: drift of a claim with a
		// terminationGracePeriod goes past pod-level blockers, since that period bounds the
		// drain anyway. Consolidation never does.
		c.unconsolidatable = fmt.Sprintf("%s (drift may take it: its claim has terminationGracePeriod %s)", c.podBlock,
			c.node.TerminationGracePeriod)
	}
	if !c.consolidatable() && !c.drifted() {
		return nil, c.unconsolidatable
	}
	return c, ""
}

// sortCandidates orders by price per unit of disruption cost, highest first (the node that saves
// most for the least disruption goes first), then by name.
func sortCandidates(cs []*candidate) {
	slices.SortStableFunc(cs, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(b.node.Price/b.cost, a.node.Price/a.cost), cmp.Compare(a.name(), b.name()))
	})
}

// newCandidate returns the node as a candidate, or the reason it is not one.
func newCandidate(now time.Time, n *Node, pools map[string]NodePool, pdb *pdbs, cache *podCache) (*candidate, string) {
	if n.NodePool == "" {
		return nil, "not managed by Nodewright"
	}
	pool, ok := pools[n.NodePool]
	if !ok {
		return nil, fmt.Sprintf("its NodePool %s is unknown", n.NodePool)
	}
	if !n.Initialized {
		return nil, "not initialized yet"
	}
	if isDisrupting(n) {
		return nil, "already being disrupted"
	}
	if n.Node.Annotations[AnnotationDoNotDisrupt] == "true" {
		return nil, fmt.Sprintf("the node has the %s annotation", AnnotationDoNotDisrupt)
	}
	c := &candidate{node: n, pool: pool}
	// The first pod, in order, that blocks or that the scheduler refuses decides; drift of a claim
	// with a terminationGracePeriod goes past a blocking pod (eventual), never past a refused one.
	np := cache.nodePods(n.Name(), n.Pods, pdb)
	if why := np.firstBlock(now, np.invalid); why != "" {
		c.podBlock = why
		if !eventual(c) {
			return nil, why
		}
	}
	if np.invalid >= 0 {
		return nil, np.invalidWhy
	}
	c.pods, c.requests.cpu, c.requests.memory, c.cost = np.pods, np.cpu, np.mem, np.cost
	c.buffered = slices.ContainsFunc(c.pods, scheduling.IsBufferPod)
	return c, ""
}

// podBlock says why pod p keeps voluntary disruption off its node now, or "": an active
// karpenter.sh/do-not-disrupt ("true", or a duration not over yet; an invalid value protects nothing) or a
// PodDisruptionBudget that allows no eviction.
func podBlock(now time.Time, p *corev1.Pod, pdb *pdbs) string {
	if protected, until, _ := DoNotDisrupt(p, now); protected {
		if !until.IsZero() {
			return fmt.Sprintf("pod %s has the %s annotation until %s", podKey(p), AnnotationDoNotDisrupt, until.UTC().Format(time.RFC3339))
		}
		return fmt.Sprintf("pod %s has the %s annotation", podKey(p), AnnotationDoNotDisrupt)
	}
	if !isMirror(p) {
		return pdb.blocks(p)
	}
	return ""
}

// eventual reports whether drift may take the candidate whatever its pods say: its claim drifted and
// has a terminationGracePeriod, which bounds the drain (Karpenter's eventual disruption).
func eventual(c *candidate) bool {
	return c.drifted() && c.node.TerminationGracePeriod > 0
}

// consolidationBlock says why consolidation may not take a candidate ("" when it may): its pool's
// consolidateAfter and policy, and for a node with pods to move a known offering and price. Drift
// reads none of them.
func consolidationBlock(now time.Time, c *candidate) string {
	n, pool := c.node, c.pool
	if pool.ConsolidateAfter == nil {
		return fmt.Sprintf("NodePool %s has consolidateAfter Never", pool.Name())
	}
	if at := settledSince(n).Add(*pool.ConsolidateAfter); now.Before(at) {
		return fmt.Sprintf("consolidateAfter %s has not passed since the node initialized or its pods last changed; consolidatable at %s", *pool.ConsolidateAfter, at.UTC().Format(time.RFC3339))
	}
	if !c.empty() {
		switch pool.Policy {
		case WhenEmpty:
			return fmt.Sprintf("NodePool %s consolidates only empty nodes (WhenEmpty) and %d pods would have to move", pool.Name(), len(c.pods))
		case "", WhenEmptyOrUnderutilized, Balanced:
		default:
			return fmt.Sprintf("consolidation policy %s is not supported for nodes with pods", pool.Policy)
		}
		if n.InstanceType == "" || n.CapacityType == "" || n.Zone == "" || n.Price <= 0 {
			return "its instance type, zone, capacity type or price is unknown"
		}
	}
	if !n.ReplacementLaunchedAt.IsZero() && now.Before(n.ReplacementLaunchedAt.Add(*pool.ConsolidateAfter)) {
		c.noReplace = true
	}
	return ""
}

// settledSince is when consolidateAfter starts counting for n: the later of its initialization
// (its launch when that is unknown) and its last pod event. Karpenter counts from the last pod
// event when there is one, else from initialization; taking the later never makes a node
// consolidatable sooner than Karpenter would, and differs only for pods bound before the node
// finished initializing.
func settledSince(n *Node) time.Time {
	since := n.InitializedAt
	if since.IsZero() {
		since = n.LaunchedAt
	}
	if n.LastPodEvent.After(since) {
		since = n.LastPodEvent
	}
	return since
}

// ConsolidatableAt is when consolidateAfter has passed for n, counted as consolidation counts it
// (settledSince): from then on Karpenter's NodeClaim shows Consolidatable True. ok is false when the
// condition does not apply: n is not initialized, or its pool's consolidateAfter is Never.
func ConsolidatableAt(n *Node, pool NodePool) (at time.Time, ok bool) {
	if !n.Initialized || pool.ConsolidateAfter == nil {
		return time.Time{}, false
	}
	return settledSince(n).Add(*pool.ConsolidateAfter), true
}

// settling reports whether n is an initialized node still inside its pool's consolidateAfter at
// now (Karpenter's IsUnderConsolidateAfter): consolidation moves no candidate's pod onto it. A
// consolidateAfter of Never or 0 has no window.
func settling(now time.Time, n *Node, pool NodePool) bool {
	if !n.Initialized || pool.ConsolidateAfter == nil || *pool.ConsolidateAfter <= 0 {
		return false
	}
	return now.Before(settledSince(n).Add(*pool.ConsolidateAfter))
}

// isDisrupting reports whether the node is already on its way out.
func isDisrupting(n *Node) bool {
	if n.Disrupting || n.Node.DeletionTimestamp != nil {
		return true
	}
	for _, t := range n.Node.Spec.Taints {
		if t.Key == scheduling.TaintDisrupted {
			return true
		}
	}
	return false
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *Node) bool {
	for _, c := range n.Node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// reportedNotReady reports whether the node has a Ready condition that is not True.
func reportedNotReady(n *Node) bool {
	for _, c := range n.Node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return false
}

func sortedPods(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	slices.SortFunc(out, comparePodKeys)
	return out
}
