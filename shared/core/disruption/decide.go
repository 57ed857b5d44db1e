package disruption

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// savingsEpsilon is the smallest difference in $/h between two commands' savings that counts.
const savingsEpsilon = 1e-9

// Action is what a command does to its nodes.
type Action string

const (
	ActionDelete  Action = "delete"
	ActionReplace Action = "replace"
)

// Method is the consolidation method that found a command.
type Method string

const (
	MethodEmpty  Method = "empty"
	MethodMulti  Method = "multi"
	MethodSingle Method = "single"
)

// Move is where a pod goes when its node is removed: an existing node or the replacement claim.
type Move struct {
	Pod string `json:"pod"`
	To  string `json:"to"`
}

// CommandNode is one node a command removes.
type CommandNode struct {
	Name         string  `json:"name"`
	Claim        string  `json:"claim"`
	NodePool     string  `json:"nodePool"`
	PricePerHour float64 `json:"pricePerHour"`
}

// Command is one disruption decision: remove Nodes, launching Replacements first when there are any.
type Command struct {
	Reason       Reason                 `json:"reason"`
	Method       Method                 `json:"method"`
	Action       Action                 `json:"action"`
	Nodes        []CommandNode          `json:"nodes"`
	Replacements []scheduling.ClaimPlan `json:"replacements,omitempty"`
	Moves        []Move                 `json:"moves,omitempty"`
	// SavingsPerHour is what the nodes cost minus what the replacement costs.
	SavingsPerHour float64 `json:"savingsPerHour"`
	// Score is the Balanced policy's approval of an Underutilized command that takes nodes of a
	// Balanced pool (nil otherwise).
	Score *Score `json:"score,omitempty"`
	// Why is the decision in one sentence for an operator.
	Why string `json:"why"`
}

// Result is what Decide found.
type Result struct {
	// Commands holds at most one command: the first method (empty, multi-node, single-node) that
	// finds one wins the run, as in Karpenter.
	Commands []Command `json:"commands"`
	// Kept lists nodes that were not disrupted and why: every node that is not a candidate,
	// candidates held back by a budget, and, when single-node consolidation ran, the candidates it
	// tried with the reason the simulation gave.
	Kept []Kept `json:"kept"`
	// Skipped says why nothing was decided at all (incomplete input).
	Skipped string `json:"skipped,omitempty"`
	// Rejected are the moves the Balanced policy rejected in this run (at most MaxRejectedMoves):
	// each candidate single-node simulated and found worth too little for its disruption, and, when
	// multi-node found nothing, the last prefix it rejected so (Karpenter reports the same one).
	// Candidates the pre-filter ruled out without a simulation are only in Kept.
	Rejected []ScoredMove `json:"rejected,omitempty"`
	// Simulations is how many scheduling simulations ran; SearchStopped is set when
	// Options.MaxSimulations or Options.TimeLeft cut the search short.
	Simulations   int  `json:"simulations"`
	SearchStopped bool `json:"searchStopped,omitempty"`
	// failedSingle are the candidates single-node simulated and found invalid, with the reason,
	// when the engine could memoize them (engine.memoSafe); Sequence passes them to the next
	// Decide of the same tick.
	failedSingle map[string]string
	// prepared is the run's scheduler preparation of the destinations, when it made one; Sequence
	// hands it to the next Decide (Options.prepared).
	prepared *scheduling.Prepared
	// multiFailed is set when multi-node searched to the end and found nothing.
	multiFailed bool
}

// Decide finds the next disruption of the cluster in in: all empty candidates within budgets,
// else several underused candidates deleted or replaced by one cheaper node, else one candidate
// deleted or replaced by a cheaper node. It decides nothing when in.Incomplete is set.
func Decide(in Input) Result {
	if in.Incomplete != "" {
		return Result{Skipped: "the snapshot is incomplete (" + in.Incomplete + "); nothing is disrupted on partial data", Commands: []Command{}, Kept: []Kept{}}
	}
	if in.Options.pods == nil {
		in.Options.pods = newPodCache()
	}
	e := newEngine(&in)
	pdb := in.Options.pdbs
	if pdb == nil {
		pdb = newPDBs(in.PDBs)
	}
	cands, kept := findCandidates(&in, e.pools, pdb)
	b := newBudgets(&in, e.pools)
	blocked := map[string]Kept{}
	var consolidatable []*candidate
	for _, c := range cands {
		if c.consolidatable() {
			consolidatable = append(consolidatable, c)
		}
	}
	cmd := e.forceful()
	if cmd == nil && !e.exhausted {
		// Karpenter's order: empty nodes, then drifted ones, then multi-node and single-node
		// consolidation.
		methods := []func([]*candidate, *budgets, map[string]Kept) *Command{e.emptiness, e.drift, e.multiNode, e.singleNode}
		for i, method := range methods {
			list := consolidatable
			if i == 1 {
				list = cands
			}
			if cmd = method(list, b, blocked); cmd != nil || e.exhausted {
				break
			}
		}
	}
	// A drifted node that no method took says why, if it has not already.
	for _, c := range cands {
		if _, ok := blocked[c.name()]; !ok && !c.consolidatable() {
			blocked[c.name()] = Kept{Node: c.name(), NodePool: c.pool.Name(), Reason: fmt.Sprintf("drifted (%s); %s", c.node.Drifted, c.unconsolidatable)}
		}
	}
	res := Result{Commands: []Command{}, Simulations: e.sims, SearchStopped: e.exhausted, failedSingle: e.failedSingle, prepared: e.prep, multiFailed: e.multiFailed,
		Rejected: e.rejected}
	chosen := map[string]bool{}
	if cmd != nil {
		res.Commands = append(res.Commands, *cmd)
		for _, n := range cmd.Nodes {
			chosen[n.Name] = true
		}
	}
	for name, k := range blocked {
		if !chosen[name] {
			kept = append(kept, k)
		}
	}
	slices.SortFunc(kept, func(a, b Kept) int { return cmp.Compare(a.Node, b.Node) })
	res.Kept = append([]Kept{}, kept...)
	return res
}

// emptiness deletes every empty candidate its pool's Empty budget allows, in one command.
func (e *engine) emptiness(cands []*candidate, b *budgets, blocked map[string]Kept) *Command {
	var chosen []*candidate
	for _, c := range cands {
		if !c.empty() {
			continue
		}
		if b.left(c.pool.Name(), ReasonEmpty) == 0 {
			blocked[c.name()] = budgetKept(c, ReasonEmpty)
			continue
		}
		b.take(c.pool.Name(), ReasonEmpty)
		chosen = append(chosen, c)
	}
	if len(chosen) == 0 {
		return nil
	}
	cmd := newCommand(ReasonEmpty, MethodEmpty, chosen, outcome{action: ActionDelete})
	for _, c := range chosen {
		cmd.SavingsPerHour += c.node.Price
	}
	free := 0
	for _, c := range chosen {
		free += c.freePods()
	}
	if free == 0 {
		cmd.Why = fmt.Sprintf("Deleting %s: no pods to move; saves $%.4f/h.", nodeList(chosen), cmd.SavingsPerHour)
	} else {
		cmd.Why = fmt.Sprintf("Deleting %s: empty but for %d pods whose eviction costs nothing (pod-deletion-cost or priority), drained with them; saves $%.4f/h.",
			nodeList(chosen), free, cmd.SavingsPerHour)
	}
	return cmd
}

// multiNode finds a prefix of the underused candidates (within the Underutilized budgets) that can
// be deleted or replaced by fewer, cheaper nodes, by binary search on the prefix length (at least two
// nodes) for the longest valid one; of the valid prefixes it tried, it keeps the one that saves the
// most, the shortest when they save the same. It searches the candidates in consolidation order, as
// Karpenter does, and, when spot-to-spot consolidation is on, in repack order too (overpaid first,
// see repackOrder), and takes the command that saves more. With spot-to-spot off the repack order is
// not searched: it leads with the on-demand nodes, whose deletion saves the most at once but leaves
// spot nodes that may then only be deleted, never repacked (on BenchmarkPlanDisrupt's 2,000-node
// cluster with few pins, spot-to-spot off: 1.29× the LP bound after the whole sequence with it,
// 1.19× without). Prefixes the LP bound proves cannot save money are skipped without a simulation.
func (e *engine) multiNode(cands []*candidate, b *budgets, blocked map[string]Kept) *Command {
	var underused []*candidate
	for _, c := range cands {
		if !c.empty() {
			underused = append(underused, c)
		}
	}
	// With spot-to-spot on, the search in consolidation order and the one in repack order
	// (prune.go) go together, their simulations solved at once.
	searches := []*prefixSearch{e.newPrefixSearch(withinBudget(underused, b, blocked))}
	if e.in.Options.searchesInTurn {
		e.runSearches(searches)
	}
	if e.in.Options.SpotToSpotConsolidation && !e.exhausted {
		searches = append(searches, e.newPrefixSearch(withinBudget(e.repackOrder(underused), b, nil)))
	}
	if e.in.Options.searchesInTurn {
		e.runSearches(searches[1:])
	} else {
		e.runSearches(searches)
	}
	best, list := searches[0].result()
	if len(searches) > 1 {
		if o, l := searches[1].result(); len(l) > 0 && (len(list) == 0 || o.savings > best.savings+savingsEpsilon) {
			best, list = o, l
		}
	}
	if len(list) == 0 {
		e.multiFailed = !e.exhausted
		for _, s := range searches {
			if s.rejectedN > 0 {
				e.noteRejected(MethodMulti, s.list[:s.rejectedN], s.rejected)
			}
		}
		return nil
	}
	return e.consolidation(MethodMulti, list, best)
}

// withinBudget keeps, in order, the candidates their NodePool's Underutilized budget allows,
// recording the others in blocked when it is not nil.
func withinBudget(cands []*candidate, b *budgets, blocked map[string]Kept) []*candidate {
	var list []*candidate
	used := map[string]int{}
	for _, c := range cands {
		pool := c.pool.Name()
		if b.left(pool, ReasonUnderutilized)-used[pool] <= 0 {
			if blocked != nil {
				blocked[c.name()] = budgetKept(c, ReasonUnderutilized)
			}
			continue
		}
		used[pool]++
		list = append(list, c)
	}
	return list
}

// consolidation turns a valid outcome into an Underutilized command.
func (e *engine) consolidation(m Method, cands []*candidate, o outcome) *Command {
	cmd := newCommand(ReasonUnderutilized, m, cands, o)
	if o.action == ActionDelete {
		cmd.Why = fmt.Sprintf("Deleting %s: %s fit on other nodes; saves $%.4f/h.", nodeList(cands), podsOf(cands, len(o.moves)), o.savings)
	} else if len(o.replacements) == 1 {
		r := o.replacements[0]
		cmd.Why = fmt.Sprintf("Replacing %s with one %s %s node in %s ($%.4f/h, %d instance types allowed): %s fit on it and other nodes; saves $%.4f/h.",
			nodeList(cands), r.CapacityType, r.InstanceType, r.Zone, r.Price, len(r.InstanceTypeOptions), podsOf(cands, len(o.moves)), o.savings)
	} else {
		cmd.Why = fmt.Sprintf("Replacing %s with %d cheaper nodes (%s): %s fit on them and other nodes; saves $%.4f/h.",
			nodeList(cands), len(o.replacements), replacementList(o.replacements), podsOf(cands, len(o.moves)), o.savings)
	}
	if o.score != nil {
		cmd.Why += " " + o.score.approval() + "."
	}
	return cmd
}

func newCommand(r Reason, m Method, cands []*candidate, o outcome) *Command {
	cmd := &Command{Reason: r, Method: m, Action: o.action, Moves: o.moves, SavingsPerHour: o.savings, Score: o.score}
	for _, c := range cands {
		cmd.Nodes = append(cmd.Nodes, CommandNode{Name: c.name(), Claim: c.node.Claim, NodePool: c.pool.Name(), PricePerHour: c.node.Price})
	}
	slices.SortFunc(cmd.Nodes, func(a, b CommandNode) int { return cmp.Compare(a.Name, b.Name) })
	cmd.Replacements = o.replacements
	return cmd
}

func budgetKept(c *candidate, r Reason) Kept {
	return Kept{Node: c.name(), NodePool: c.pool.Name(), BudgetBlocked: true,
		Reason: fmt.Sprintf("NodePool %s's disruption budget for %s allows no more disruptions now", c.pool.Name(), r)}
}

// podsOf words the n pods that move off cands: "its 1 pod", "their 7 pods".
func podsOf(cands []*candidate, n int) string {
	owner, noun := "their", "pods"
	if len(cands) == 1 {
		owner = "its"
	}
	if n == 1 {
		noun = "pod"
	}
	return fmt.Sprintf("%s %d %s", owner, n, noun)
}

// replacementList words replacements by kind: "2 × spot m5.large in us-east-1a, 1 × spot
// c5.xlarge in us-east-1b", each priced.
func replacementList(reps []scheduling.ClaimPlan) string {
	type kind struct {
		ct, it, zone string
		price        float64
	}
	counts := map[kind]int{}
	var order []kind
	for _, r := range reps {
		k := kind{r.CapacityType, r.InstanceType, r.Zone, r.Price}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d × %s %s in %s at $%.4f/h", counts[k], k.ct, k.it, k.zone, k.price)
	}
	return strings.Join(parts, ", ")
}

func nodeList(cands []*candidate) string {
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.name()
	}
	slices.Sort(names)
	if len(names) == 1 {
		return "node " + names[0]
	}
	if len(names) > 5 {
		return fmt.Sprintf("%d nodes (%s, ...)", len(names), strings.Join(names[:5], ", "))
	}
	return "nodes " + strings.Join(names, ", ")
}
