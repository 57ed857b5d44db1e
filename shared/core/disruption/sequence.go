package disruption

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// DefaultMaxTicks bounds a Sequence whose options set no MaxTicks.
const DefaultMaxTicks = 1000

// SequenceOptions tune Sequence.
type SequenceOptions struct {
	// MaxTicks bounds the ticks run (DefaultMaxTicks when 0); SequenceResult.TickLimitReached says
	// when the bound stopped the sequence before a tick decided nothing.
	MaxTicks int
	// TickInterval is how far Input.Now advances from one tick to the next (one minute when 0, the
	// disruption function's schedule).
	TickInterval time.Duration
	// SchedulesAlwaysActive drops every budget's schedule and duration, so each budget holds at every
	// tick: a dry run answers for the worst moment, not for the hour it happens to be run.
	SchedulesAlwaysActive bool
	// ReplacementPrefix names replacements prefix-1, prefix-2... across the whole sequence ("r" when
	// empty); a name an existing node already has is skipped.
	ReplacementPrefix string
	// noMemo makes every Decide of a tick simulate every candidate again (tests compare, memo.go).
	noMemo bool
	// noReuse makes every Decide read the cluster afresh: no preparation or PDB answers of an
	// earlier Decide (tests compare).
	noReuse bool
}

// SequencedCommand is one command of a sequence: Command as Decide returned it, except that its
// replacement is renamed (unique across the sequence) and its moves to the replacement say so.
type SequencedCommand struct {
	// Tick numbers the disruption run that decided it, from 1.
	Tick int
	Command
}

// SequenceResult is what a run of ticks decided.
type SequenceResult struct {
	Commands []SequencedCommand
	// Kept are the nodes left at the end that were not disrupted, with the reasons the last tick's
	// final Decide gave (every node present at the end has one).
	Kept []Kept
	// Rejected are the moves the Balanced policy rejected in the last tick's final Decide (the one
	// that decided nothing): why the nodes of Balanced pools left at the end are kept, with scores.
	Rejected []ScoredMove
	// Nodes are the cluster after the last completed tick: disrupted nodes gone, replacements
	// initialized, moved pods bound to their destinations.
	Nodes []Node
	// Ticks counts the ticks run, the last one (which decided nothing) included.
	Ticks int
	// TickLimitReached is set when MaxTicks ran out while ticks still decided commands.
	TickLimitReached bool
	// Simulations sums Result.Simulations; SearchStopped is set when any Decide cut its search short.
	Simulations   int
	SearchStopped bool
	// Skipped is Decide's reason when it decided nothing at all (incomplete input).
	Skipped string
}

// Sequence plays the disruption function forward from in: tick after tick, every command it would
// take, as if each tick's commands completed before the next tick started, until a tick decides
// nothing or MaxTicks ticks have run. It does not modify in.
//
// Within a tick Decide runs again after each command, with the command's nodes marked Disrupting
// (they count against budgets and take no pods), its replacement added as a node that is not
// initialized yet (holding the pods moved to it: nothing else moves there and it is not disrupted
// in that tick) and the pods moved to existing nodes bound there; the tick ends when Decide returns
// no command. Budgets are thus counted per tick and NodePool on the pool's initialized nodes at the
// start of the tick. Completing a tick removes the disrupted nodes and initializes the replacements
// (ReplacementLaunchedAt is the tick's time, so the churn guard applies to them); then Input.Now
// advances by TickInterval.
//
// Pod events are not recorded: a node's LastPodEvent stays what the input says, so consolidateAfter
// measured from pod events never blocks a node the input let through. Nodes that were already
// disrupting in the input stay as they are (disrupting, counting against budgets) for the whole
// sequence.
//
// A replacement launched in the tick takes no pod but its own command's while the tick lasts
// (closed, memo.go), so later commands of the tick open their own replacement instead of being
// rejected for landing on one not yet up; and a candidate whose single-node simulation failed is
// not simulated again in the same tick when that cannot change the answer (memo.go).
//
// Cost: every tick ends with a Decide that finds nothing, which on a consolidated cluster means a
// single-node simulation per candidate (about 650 at 2,000 nodes, 1-2 ms each once the scheduler
// prepares the destinations once per Decide). With replacements closed, late ticks take many
// replaces each instead of one, so a large cluster needs about ten ticks instead of about fifty.
func Sequence(in Input, opts SequenceOptions) SequenceResult {
	maxTicks := opts.MaxTicks
	if maxTicks <= 0 {
		maxTicks = DefaultMaxTicks
	}
	interval := opts.TickInterval
	if interval <= 0 {
		interval = time.Minute
	}
	prefix := opts.ReplacementPrefix
	if prefix == "" {
		prefix = "r"
	}
	base := in
	base.Options.pods = newPodCache() // pod objects are shared by every run of the sequence
	if !opts.noReuse {
		base.Options.pdbs = newPDBs(in.PDBs)
	}
	if opts.SchedulesAlwaysActive {
		base.NodePools = alwaysActive(in.NodePools)
	}
	s := &sequencer{base: base, prefix: prefix, names: map[string]bool{}, noMemo: opts.noMemo, noReuse: opts.noReuse}
	s.nodes = make([]Node, len(in.Nodes))
	for i, n := range in.Nodes {
		n.Pods = slices.Clone(n.Pods)
		s.nodes[i] = n
		s.names[n.Name()] = true
	}
	res := SequenceResult{Commands: []SequencedCommand{}}
	for tick := 1; ; tick++ {
		if tick > maxTicks {
			res.TickLimitReached = true
			break
		}
		res.Ticks = tick
		now := in.Now.Add(time.Duration(tick-1) * interval)
		decided, last := s.tick(tick, now, &res)
		if last.Skipped != "" {
			res.Skipped = last.Skipped
		}
		res.Kept, res.Rejected = last.Kept, last.Rejected
		if decided == 0 {
			break
		}
		s.complete(now)
	}
	res.Nodes = s.nodes
	res.Kept = s.keptAtEnd(res.Kept, res.TickLimitReached)
	return res
}

// sequencer is the cluster as the ticks change it.
type sequencer struct {
	base   Input
	prefix string
	nodes  []Node
	// names are every node name seen (input and replacements), so replacement names never clash.
	names map[string]bool
	seq   int
	// disrupted and launched are this tick's disrupted node names and replacement names.
	disrupted []string
	launched  []string
	noMemo    bool
	noReuse   bool
	// prepared is the last Decide's scheduler preparation, from which the next prepares the
	// cluster again (Options.prepared): the nodes a command did not change are not read again.
	prepared *scheduling.Prepared
}

// tick runs Decide until it returns no command, applying each command; it returns how many
// commands it took and the last Decide's result.
func (s *sequencer) tick(tick int, now time.Time, res *SequenceResult) (int, Result) {
	s.disrupted, s.launched = nil, nil
	decided := 0
	// failed are the candidates whose single-node simulation failed earlier in this tick (memo.go).
	failed := map[string]string{}
	multiFailed := false
	for {
		in := s.base
		in.Now, in.Nodes = now, s.nodes
		if !s.noMemo {
			in.Options.failedSingle = failed
		}
		in.Options.prepared, in.Options.multiFailed = s.prepared, multiFailed
		r := Decide(in)
		multiFailed = multiFailed || r.multiFailed
		maps.Copy(failed, r.failedSingle)
		if r.prepared != nil && !s.noReuse {
			s.prepared = r.prepared
		}
		res.Simulations += r.Simulations
		res.SearchStopped = res.SearchStopped || r.SearchStopped
		// A command removes at least one node, so a tick cannot take more commands than there are
		// nodes; the bound only guards against an engine that would keep answering.
		if len(r.Commands) == 0 || decided >= len(s.nodes) {
			return decided, r
		}
		res.Commands = append(res.Commands, SequencedCommand{Tick: tick, Command: s.apply(r.Commands[0], now)})
		decided++
	}
}

// apply marks the command's nodes disrupting, launches its replacement as a node not initialized
// yet and binds the moved pods to their destinations. It returns the command with the replacement
// renamed.
func (s *sequencer) apply(cmd Command, now time.Time) Command {
	index := make(map[string]int, len(s.nodes))
	for i := range s.nodes {
		index[s.nodes[i].Name()] = i
	}
	rename := map[string]string{}
	cmd.Replacements = slices.Clone(cmd.Replacements)
	for i, cp := range cmd.Replacements {
		name := s.nextName()
		rename[cp.Name] = name
		cp.Name = name
		cmd.Replacements[i] = cp
		s.nodes = append(s.nodes, s.replacementNode(cp, now))
		index[name] = len(s.nodes) - 1
		s.launched = append(s.launched, name)
	}
	type leaving struct {
		pod  *corev1.Pod
		from int
	}
	moving := map[string]leaving{}
	for _, cn := range cmd.Nodes {
		i, ok := index[cn.Name]
		if !ok {
			continue
		}
		n := &s.nodes[i]
		n.Disrupting = true
		var stay []*corev1.Pod
		for _, p := range n.Pods {
			if isReschedulable(p) {
				moving[podKey(p)] = leaving{p, i}
			} else {
				stay = append(stay, p)
			}
		}
		n.Pods = stay
		s.disrupted = append(s.disrupted, cn.Name)
	}
	cmd.Moves = slices.Clone(cmd.Moves)
	for i, m := range cmd.Moves {
		if to, ok := rename[m.To]; ok {
			m.To = to
			cmd.Moves[i] = m
		}
		l, ok := moving[m.Pod]
		j, known := index[m.To]
		if !ok || !known {
			continue
		}
		delete(moving, m.Pod)
		s.nodes[j].Pods = append(s.nodes[j].Pods, l.pod)
	}
	// A pod the command did not place (none should be) stays on its node and is simulated as the
	// pod of a disrupting node from now on.
	for _, key := range slices.Sorted(maps.Keys(moving)) {
		l := moving[key]
		s.nodes[l.from].Pods = append(s.nodes[l.from].Pods, l.pod)
	}
	return cmd
}

// complete finishes the tick's commands: disrupted nodes are gone, replacements are initialized.
func (s *sequencer) complete(now time.Time) {
	gone := map[string]bool{}
	for _, name := range s.disrupted {
		gone[name] = true
	}
	fresh := map[string]bool{}
	for _, name := range s.launched {
		fresh[name] = true
	}
	kept := s.nodes[:0]
	for _, n := range s.nodes {
		if gone[n.Name()] {
			continue
		}
		n.closed = false
		if fresh[n.Name()] {
			// A new object, not a label set in place: a Prepared of an earlier Decide still holds
			// the old one (scheduling.PrepareFrom).
			node := n.Node.DeepCopy()
			node.Labels[scheduling.LabelNodeInitalized] = "true"
			n.Node, n.Initialized, n.ReplacementLaunchedAt = node, true, now
		}
		kept = append(kept, n)
	}
	clear(s.nodes[len(kept):])
	s.nodes = kept
}

func (s *sequencer) nextName() string {
	for {
		s.seq++
		name := fmt.Sprintf("%s-%d", s.prefix, s.seq)
		if !s.names[name] {
			s.names[name] = true
			return name
		}
	}
}

// replacementNode is the node a replacement claim becomes: its offering's labels (the pool's, the
// instance type's, the claim's single-valued requirements, its zone and capacity type), the pool's
// taints, the instance type's allocatable and the claim's price. It is not initialized yet. Its
// InitializedAt and LaunchedAt are left zero, as pod events are not recorded (see Sequence): only
// the churn guard, through ReplacementLaunchedAt, holds it back, and once initialized it is never
// settling (it takes candidates' pods at once, where a real one would wait out consolidateAfter).
func (s *sequencer) replacementNode(cp scheduling.ClaimPlan, now time.Time) Node {
	labels := map[string]string{}
	var pool *NodePool
	for i := range s.base.NodePools {
		if s.base.NodePools[i].Name() == cp.NodePool {
			pool = &s.base.NodePools[i]
		}
	}
	types := s.base.InstanceTypes
	if pool != nil {
		maps.Copy(labels, pool.Scheduling.Labels)
		if len(pool.Scheduling.InstanceTypes) > 0 {
			types = pool.Scheduling.InstanceTypes
		}
	}
	var it *scheduling.InstanceType
	for _, t := range types {
		if t.Name == cp.InstanceType {
			it = t
		}
	}
	if reqs, err := scheduling.RequirementsFromSpecs(cp.Requirements); err == nil {
		maps.Copy(labels, reqs.Labels())
	}
	var alloc, capacity scheduling.Resources
	if it != nil {
		maps.Copy(labels, it.Requirements.Labels())
		alloc, capacity = it.Allocatable, it.Capacity
	}
	labels[scheduling.LabelInstanceType] = cp.InstanceType
	labels[scheduling.LabelZone] = cp.Zone
	labels[scheduling.LabelCapacityType] = cp.CapacityType
	labels[scheduling.LabelNodePool] = cp.NodePool
	labels[scheduling.LabelHostname] = cp.Name
	node := &corev1.Node{}
	node.Name, node.Labels = cp.Name, labels
	if pool != nil {
		node.Spec.Taints = slices.Clone(pool.Scheduling.Taints)
	}
	node.Status.Allocatable, node.Status.Capacity = alloc.List(), capacity.List()
	if node.Status.Capacity == nil {
		node.Status.Capacity = corev1.ResourceList{}
	}
	node.Status.Capacity[corev1.ResourcePods] = *resource.NewQuantity(alloc.Pods, resource.DecimalSI)
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	return Node{
		Node: node, NodePool: cp.NodePool, Claim: cp.Name, InstanceType: cp.InstanceType, Zone: cp.Zone,
		CapacityType: cp.CapacityType, Price: cp.Price, ReplacementLaunchedAt: now,
		Allocatable: alloc, Capacity: capacity, closed: true,
	}
}

// keptAtEnd returns, for every node left at the end and not disrupting, its reason from the last
// tick, and a reason of its own for a node that Decide left without one (a search cut short, or a
// replacement of the last tick when the tick limit stopped the sequence).
func (s *sequencer) keptAtEnd(last []Kept, limited bool) []Kept {
	reason := map[string]Kept{}
	for _, k := range last {
		reason[k.Node] = k
	}
	out := []Kept{}
	for _, n := range s.nodes {
		k, ok := reason[n.Name()]
		switch {
		case limited && slices.Contains(s.launched, n.Name()):
			k = Kept{Node: n.Name(), NodePool: n.NodePool, Reason: "launched in the last tick the tick limit allowed; not reconsidered"}
		case !ok:
			k = Kept{Node: n.Name(), NodePool: n.NodePool, Reason: "no command was found for it before the search stopped"}
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kept) int { return cmp.Compare(a.Node, b.Node) })
	return out
}

// alwaysActive returns pools whose budgets have no schedule, so that every budget is in force.
func alwaysActive(pools []NodePool) []NodePool {
	out := slices.Clone(pools)
	for i := range out {
		if out[i].Budgets == nil {
			continue
		}
		bs := slices.Clone(out[i].Budgets)
		for j := range bs {
			bs[j].Schedule, bs[j].Duration = "", 0
		}
		out[i].Budgets = bs
	}
	return out
}
