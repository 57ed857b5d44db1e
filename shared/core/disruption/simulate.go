package disruption

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// engine holds what one Decide or Validate shares between its simulations.
type engine struct {
	in    *Input
	pools map[string]NodePool
	// schedPools are the NodePools as the scheduler takes them, by name.
	schedPools []scheduling.NodePool
	// nodes are all nodes by name; byName indexes them.
	nodes  []*Node
	byName map[string]*Node
	// destinations are the nodes pods may move to: all but those already disrupting. compact,
	// when set, are the same nodes as simulations see them (compact.go).
	destinations []scheduling.ExistingNode
	compact      []scheduling.ExistingNode
	// alwaysMoving are the pending pods and the pods of disrupting nodes, simulated every time.
	alwaysMoving []*corev1.Pod
	// settling are the destinations still inside their own consolidateAfter (settling): a
	// consolidation's simulation moves none of the candidates' pods there, as Karpenter's does
	// not, though the pods in exempt (alwaysMoving) may go there. Drift and forceful removal do not
	// hold them back.
	settling map[string]bool
	exempt   map[*corev1.Pod]bool
	catalogs map[string]map[string]*scheduling.InstanceType
	prune    *pruner
	// prep is the destinations read once by the scheduler for every simulation of the run
	// (prepared).
	prep      *scheduling.Prepared
	sims      int
	exhausted bool
	// failedSingle are the candidates single-node found invalid, when memoSafe (memo.go).
	failedSingle map[string]string
	// multiFailed is set when multi-node searched to the end and found nothing.
	multiFailed bool
	// totals are the Balanced pools' totals (balanced.go), nil when no pool is Balanced; rejected
	// are the moves the Balanced policy rejected in this run (noteRejected).
	totals   map[string]poolTotals
	rejected []ScoredMove
}

func newEngine(in *Input) *engine {
	e := &engine{in: in, pools: map[string]NodePool{}, byName: map[string]*Node{}, catalogs: map[string]map[string]*scheduling.InstanceType{}}
	for _, p := range in.NodePools {
		e.pools[p.Name()] = p
		e.schedPools = append(e.schedPools, p.Scheduling)
	}
	slices.SortFunc(e.schedPools, func(a, b scheduling.NodePool) int { return cmp.Compare(a.Name, b.Name) })
	for i := range in.Nodes {
		e.nodes = append(e.nodes, &in.Nodes[i])
	}
	slices.SortFunc(e.nodes, func(a, b *Node) int { return cmp.Compare(a.Name(), b.Name()) })
	var disruptingPods []*corev1.Pod
	for _, n := range e.nodes {
		e.byName[n.Name()] = n
		if isDisrupting(n) {
			for _, p := range sortedPods(n.Pods) {
				if isReschedulable(p) {
					disruptingPods = append(disruptingPods, p)
				}
			}
			continue
		}
		e.destinations = append(e.destinations, scheduling.ExistingNode{
			Node: n.Node, Pods: n.Pods, NodePool: n.NodePool, Initialized: n.Initialized,
			Allocatable: n.Allocatable, Capacity: n.Capacity,
		})
		if pool, ok := e.pools[n.NodePool]; ok && settling(in.Now, n, pool) {
			if e.settling == nil {
				e.settling = map[string]bool{}
			}
			e.settling[n.Name()] = true
		}
	}
	e.alwaysMoving = append(sortedPods(in.PendingPods), disruptingPods...)
	if e.settling != nil {
		e.exempt = make(map[*corev1.Pod]bool, len(e.alwaysMoving))
		for _, p := range e.alwaysMoving {
			e.exempt[p] = true
		}
	}
	e.totals = balancedTotals(e.pools, e.nodes)
	if len(e.alwaysMoving) == 0 {
		// Replacements of the current Sequence tick take no pod but their own (memo.go), and no node
		// that is not up takes a candidate's pod: a command may not count on capacity that is not
		// up, and Karpenter's simulation rejects a command that would, although a replacement could
		// take its pods. Such a node keeps its pods, for topology. With pods always moving (pending,
		// or from disrupting nodes), which may be waiting for it, it stays open, and a candidate pod
		// it takes makes the command invalid (simulate).
		for i, d := range e.destinations {
			if e.byName[d.Node.Name].closed || !d.Initialized {
				e.destinations[i] = closeNode(d)
			}
		}
	}
	if !in.Options.fullSimulation {
		e.compact = compactNodes(e.destinations, e.alwaysMoving, in.Options.pods, len(in.CSINodes) > 0)
	}
	return e
}

// prepared returns the destinations (compact when set) as the scheduler prepares them once for
// all simulations of the run: each simulation is then Prepared.Solve with the candidates left out,
// the same plan as a Solve over the other destinations (scheduling.TestPreparedSolveMatchesSolve)
// without reading every node again.
func (e *engine) prepared() *scheduling.Prepared {
	if e.prep != nil {
		return e.prep
	}
	dests := e.destinations
	if e.compact != nil {
		dests = e.compact
	}
	in := e.in
	e.prep = scheduling.PrepareFrom(in.Options.prepared, scheduling.Input{
		Nodes: dests, InFlight: in.InFlight, NodePools: e.schedPools, DaemonSets: in.DaemonSets,
		InstanceTypes: in.InstanceTypes, Unavailable: in.Unavailable, MinValuesPolicy: in.MinValuesPolicy,
		PersistentVolumeClaims: in.PersistentVolumeClaims, PersistentVolumes: in.PersistentVolumes,
		StorageClasses: in.StorageClasses, CSINodes: in.CSINodes, Namespaces: in.Namespaces, IgnorePreferences: in.IgnorePreferences,
	})
	return e.prep
}

// catalog returns the instance types a pool launches, by name.
func (e *engine) catalog(pool string) map[string]*scheduling.InstanceType {
	if c, ok := e.catalogs[pool]; ok {
		return c
	}
	types := e.in.InstanceTypes
	if p, ok := e.pools[pool]; ok && len(p.Scheduling.InstanceTypes) > 0 {
		types = p.Scheduling.InstanceTypes
	}
	c := make(map[string]*scheduling.InstanceType, len(types))
	for _, it := range types {
		c[it.Name] = it
	}
	e.catalogs[pool] = c
	return c
}

// mayRun reports whether the search budget allows one more simulation, and counts it.
func (e *engine) mayRun() bool {
	if e.exhausted {
		return false
	}
	o := e.in.Options
	if (o.MaxSimulations > 0 && e.sims >= o.MaxSimulations) || (o.TimeLeft != nil && !o.TimeLeft()) {
		e.exhausted = true
		return false
	}
	e.sims++
	return true
}

// outcome is what removing a set of candidates would do.
type outcome struct {
	// invalid says why the candidates cannot be removed together; the rest is then meaningless.
	invalid      string
	action       Action
	replacements []scheduling.ClaimPlan
	moves        []Move
	savings      float64
	// stranded are the candidate pods a forceful roll could place nowhere (they will be pending).
	stranded []string
	// score is the Balanced policy's score of a move that saves money and takes nodes of a Balanced
	// pool; when it rejects the move, invalid says so and action and savings say what it was.
	score *Score
}

// maxReplacements is how many new nodes may replace n candidates: one for a single node (replace
// it with a cheaper one), and for several strictly fewer than they are, so that a command always
// shrinks the cluster as well as its bill. Karpenter's multi-node consolidation allows one; several
// let one command repack a whole budget's worth of fragmented nodes onto fewer, cheaper ones.
func maxReplacements(n int) int { return max(1, n-1) }

// simulate schedules the candidates' pods, with the pending pods and those of disrupting nodes, on
// every other node and new claims, and says whether the candidates can be deleted (no new claim)
// or replaced (at most maxReplacements new claims, together cheaper than the candidates). A
// candidate pod that cannot be placed, or that would land on a node or claim not initialized yet,
// makes it invalid. No candidate pod goes to a node still inside its own consolidateAfter
// (engine.settling).
func (e *engine) simulate(cands []*candidate) outcome {
	return e.simulateAll([][]*candidate{cands})[0]
}

// simulateAll is simulate for each set of candidates, with the sets' solves run together
// (Prepared.SolveAll); the outcomes are in the sets' order, each the one simulate gives it.
func (e *engine) simulateAll(sets [][]*candidate) []outcome {
	if len(sets) == 0 {
		return nil // nothing to prepare the destinations for
	}
	jobs := make([]scheduling.SolveJob, len(sets))
	moving := make([]int, len(sets))
	for i, cands := range sets {
		removed := make(map[string]bool, len(cands))
		jobs[i].Pods, moving[i] = e.moving(cands, removed)
		jobs[i].LeaveOut, jobs[i].Settling, jobs[i].Exempt = removed, e.settling, e.exempt
	}
	results := e.prepared().SolveAll(jobs)
	out := make([]outcome, len(sets))
	for i, r := range results {
		if r.Err != nil {
			out[i] = outcome{invalid: fmt.Sprintf("the simulation failed: %v", r.Err)}
			continue
		}
		out[i] = e.judge(sets[i], placementOf(r.Plan, jobs[i].Pods, moving[i]))
	}
	return out
}

// judge says what removing cands would do, given where their simulation placed the pods.
func (e *engine) judge(cands []*candidate, pl placement) outcome {
	plan, dest, onClaim, failures := pl.plan, pl.dest, pl.onClaim, pl.failures
	out := outcome{}
	for _, p := range pl.moving {
		to, ok := dest[p]
		if !ok {
			return outcome{invalid: fmt.Sprintf("pod %s could not be rescheduled: %s", podKey(p), failures[p])}
		}
		if !onClaim[p] {
			if n, ok := e.byName[to]; !ok || !n.Initialized {
				return outcome{invalid: fmt.Sprintf("pod %s would move to %s, which is not initialized yet", podKey(p), to)}
			}
		}
		out.moves = append(out.moves, Move{Pod: podKey(p), To: to})
	}
	total := 0.0
	for _, c := range cands {
		total += c.node.Price
	}
	switch len(plan.NewClaims) {
	case 0:
		out.action, out.savings = ActionDelete, total
		if total <= 0 {
			return outcome{invalid: "deleting the nodes saves nothing"}
		}
	default:
		if n, most := len(plan.NewClaims), maxReplacements(len(cands)); n > most {
			names := make([]string, n)
			for i, cp := range plan.NewClaims {
				names[i] = cp.Name
			}
			return outcome{invalid: fmt.Sprintf("the pods would need %d new nodes (%s); replacing %d launches at most %d", n, strings.Join(names, ", "), len(cands), most)}
		}
		for _, c := range cands {
			if c.noReplace {
				return outcome{invalid: fmt.Sprintf("node %s was launched as a replacement less than consolidateAfter ago and may not be replaced yet", c.name())}
			}
		}
		reps, why := e.priceReplacements(cands, total, plan.NewClaims)
		if why != "" {
			return outcome{invalid: why}
		}
		spent := 0.0
		for _, cp := range reps {
			spent += cp.Price
		}
		out.action, out.replacements, out.savings = ActionReplace, reps, total-spent
		if out.savings <= 0 {
			return outcome{invalid: fmt.Sprintf("the replacements cost $%.4f/h, not less than the $%.4f/h of the nodes", spent, total)}
		}
	}
	if s := e.scoreMove(cands, out.savings); s != nil {
		if !s.Approved {
			return outcome{invalid: "the Balanced policy rejects the move: " + s.rejection(), action: out.action, savings: out.savings, score: s}
		}
		out.score = s
	}
	slices.SortFunc(out.moves, func(a, b Move) int { return cmp.Compare(a.Pod, b.Pod) })
	return out
}

// placement is where one simulation put the pods: each pod's destination (a node or a new claim's
// name), which went to new claims, and why the unplaced ones could not be placed.
type placement struct {
	plan *scheduling.Plan
	// moving are the candidates' own pods, in order.
	moving   []*corev1.Pod
	dest     map[*corev1.Pod]string
	onClaim  map[*corev1.Pod]bool
	failures map[*corev1.Pod]string
}

// place solves the candidates' pods, with the pending pods and those of disrupting nodes, on every
// node but the candidates and those in removed (which place adds the candidates to), and new claims.
func (e *engine) place(cands []*candidate, removed map[string]bool) (placement, error) {
	pods, moving := e.moving(cands, removed)
	plan, err := e.prepared().Solve(pods, removed)
	if err != nil {
		return placement{}, err
	}
	return placementOf(plan, pods, moving), nil
}

// moving returns the pods a simulation of removing cands places: the candidates' own, the first
// n, then the pending pods and those of disrupting nodes. It adds the candidates to removed.
func (e *engine) moving(cands []*candidate, removed map[string]bool) (pods []*corev1.Pod, n int) {
	for _, c := range cands {
		removed[c.name()] = true
		pods = append(pods, c.pods...)
	}
	n = len(pods)
	return append(pods, e.alwaysMoving...), n
}

// placementOf reads where plan put pods, the first moving of which are the candidates' own.
func placementOf(plan *scheduling.Plan, pods []*corev1.Pod, moving int) placement {
	pl := placement{plan: plan, moving: pods[:moving], dest: make(map[*corev1.Pod]string, len(pods)), onClaim: map[*corev1.Pod]bool{},
		failures: make(map[*corev1.Pod]string, len(plan.Unschedulable))}
	for _, np := range plan.ExistingNodes {
		for _, p := range np.Pods {
			pl.dest[p] = np.Name
		}
	}
	for _, cp := range plan.NewClaims {
		for _, p := range cp.Pods {
			pl.dest[p], pl.onClaim[p] = cp.Name, true
		}
	}
	for _, f := range plan.Unschedulable {
		pl.failures[f.Pod] = f.Reason
	}
	return pl
}
