package disruption

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Methods that roll nodes rather than consolidate them.
const (
	// MethodDrift replaces drifted nodes, within the Drifted budget, one non-empty node per command
	// (all empty drifted nodes the budget allows in one).
	MethodDrift Method = "drift"
	// MethodForceful removes unhealthy nodes node repair asked to replace, nodes an operator asked to
	// disrupt and expired nodes, whatever budgets and do-not-disrupt say, launching capacity for their
	// pods first.
	MethodForceful Method = "forceful"
)

// forceful builds one command for the nodes node repair asked to replace, else for the nodes an
// operator asked to disrupt, else for the expired nodes: every managed node of a known pool that is not already being disrupted. Budgets,
// do-not-disrupt and PDBs do not hold them back (Karpenter's forceful methods), but the command
// launches new nodes for whatever pods the rest of the cluster cannot hold, and the drain starts
// once they are up. Pods that fit nowhere do not stop the command: they are named in its Why.
func (e *engine) forceful() *Command {
	for _, reason := range []Reason{ReasonUnhealthy, ReasonManual, ReasonExpired} {
		var cands []*candidate
		for _, n := range e.nodes {
			pool, ok := e.pools[n.NodePool]
			if n.NodePool == "" || !ok || isDisrupting(n) || !e.forced(n, reason) {
				continue
			}
			cands = append(cands, forcedCandidate(n, pool))
		}
		if len(cands) == 0 {
			continue
		}
		if !e.mayRun() {
			return nil
		}
		o := e.simulateRoll(cands, false)
		return e.rollCommand(reason, MethodForceful, cands, o)
	}
	return nil
}

// forcedCandidate is node n as a forceful command takes it: every pod that must move, whatever
// do-not-disrupt and PDBs say.
func forcedCandidate(n *Node, pool NodePool) *candidate {
	c := &candidate{node: n, pool: pool}
	for _, p := range sortedPods(n.Pods) {
		if isReschedulable(p) {
			c.pods = append(c.pods, p)
		}
	}
	return c
}

// forced reports whether node n is to be removed forcefully for reason at the engine's time.
func (e *engine) forced(n *Node, reason Reason) bool {
	switch reason {
	case ReasonUnhealthy:
		return n.Unhealthy != ""
	case ReasonManual:
		return n.Requested && n.Unhealthy == ""
	}
	return !n.ExpiresAt.IsZero() && !e.in.Now.Before(n.ExpiresAt)
}

// drift rolls drifted candidates within their pools' Drifted budgets, as Karpenter does after
// emptiness, in Karpenter's order: empty nodes first, then the node that drifted first (oldest
// DriftedSince; the name breaks ties). All empty drifted nodes the budgets allow go in one delete;
// otherwise the first drifted node in that order whose pods all fit on the other initialized nodes
// and new nodes of their NodePools as configured now. Its replacements are not priced against it:
// drift trades cost for conformance.
func (e *engine) drift(cands []*candidate, b *budgets, blocked map[string]Kept) *Command {
	var drifted []*candidate
	for _, c := range cands {
		if c.drifted() {
			drifted = append(drifted, c)
		}
	}
	slices.SortStableFunc(drifted, func(a, c *candidate) int {
		return cmp.Or(a.node.DriftedSince.Compare(c.node.DriftedSince), cmp.Compare(a.name(), c.name()))
	})
	var empty []*candidate
	for _, c := range drifted {
		if !c.noPods() {
			continue
		}
		if b.left(c.pool.Name(), ReasonDrifted) == 0 {
			blocked[c.name()] = budgetKept(c, ReasonDrifted)
			continue
		}
		b.take(c.pool.Name(), ReasonDrifted)
		empty = append(empty, c)
	}
	if len(empty) > 0 {
		return e.rollCommand(ReasonDrifted, MethodDrift, empty, outcome{action: ActionDelete})
	}
	for _, c := range drifted {
		if b.left(c.pool.Name(), ReasonDrifted) == 0 {
			blocked[c.name()] = budgetKept(c, ReasonDrifted)
			continue
		}
		if !e.mayRun() {
			return nil
		}
		one := []*candidate{c}
		o := e.simulateRoll(one, true)
		if o.invalid != "" {
			blocked[c.name()] = Kept{Node: c.name(), NodePool: c.pool.Name(), Reason: fmt.Sprintf("drifted (%s), but not replaceable now: %s", c.node.Drifted, o.invalid)}
			continue
		}
		return e.rollCommand(ReasonDrifted, MethodDrift, one, o)
	}
	return nil
}

// ExpiryHorizon is how soon a node must expire for a roll not to move pods onto it: pods moved off a
// drifted or expired node go to new nodes rather than to a node that is itself about to be rolled.
const ExpiryHorizon = 10 * time.Minute

// rolling returns the nodes a roll does not move pods to, besides its own candidates: drifted nodes,
// nodes expiring within ExpiryHorizon and nodes asked to be disrupted, so a pod moves once, not once
// per rolled node, and nodes node repair found unhealthy or whose Ready condition says False or Unknown (a node with no Ready condition
// reported is not judged).
func (e *engine) rolling() map[string]bool {
	out := map[string]bool{}
	for _, n := range e.nodes {
		if n.NodePool == "" || isDisrupting(n) {
			continue
		}
		if n.Drifted != "" || n.Requested || n.Unhealthy != "" || reportedNotReady(n) || (!n.ExpiresAt.IsZero() && n.ExpiresAt.Before(e.in.Now.Add(ExpiryHorizon))) {
			out[n.Name()] = true
		}
	}
	return out
}

// simulateRoll schedules the candidates' pods, with the pending pods and those of disrupting nodes,
// on every other node (but those rolling) and new claims of their NodePools, with no price rule and
// no cap on new claims. strict (drift) makes a candidate pod that cannot be placed, or that would land on a node
// not initialized yet, invalidate the roll; otherwise such pods are only counted in stranded.
func (e *engine) simulateRoll(cands []*candidate, strict bool) outcome {
	removed := e.rolling()
	pl, err := e.place(cands, removed)
	if err != nil {
		return outcome{invalid: fmt.Sprintf("the simulation failed: %v", err)}
	}
	plan, dest, onClaim, failures := pl.plan, pl.dest, pl.onClaim, pl.failures
	out := outcome{}
	for _, p := range pl.moving {
		to, ok := dest[p]
		if !ok {
			if strict {
				return outcome{invalid: fmt.Sprintf("pod %s could not be rescheduled: %s", podKey(p), failures[p])}
			}
			out.stranded = append(out.stranded, podKey(p))
			continue
		}
		if !onClaim[p] {
			if n, ok := e.byName[to]; (!ok || !n.Initialized) && strict {
				return outcome{invalid: fmt.Sprintf("pod %s would move to %s, which is not initialized yet", podKey(p), to)}
			}
		}
		out.moves = append(out.moves, Move{Pod: podKey(p), To: to})
	}
	total := 0.0
	for _, c := range cands {
		total += c.node.Price
	}
	out.action, out.savings = ActionDelete, total
	if len(plan.NewClaims) > 0 {
		out.action, out.replacements = ActionReplace, plan.NewClaims
		for _, cp := range plan.NewClaims {
			out.savings -= cp.Price
		}
	}
	slices.SortFunc(out.moves, func(a, b Move) int { return cmp.Compare(a.Pod, b.Pod) })
	return out
}

// rollCommand turns a roll's outcome into a command explained for an operator.
func (e *engine) rollCommand(r Reason, m Method, cands []*candidate, o outcome) *Command {
	cmd := newCommand(r, m, cands, o)
	var why string
	switch r {
	case ReasonDrifted:
		why = "drifted: " + driftList(cands)
	case ReasonExpired:
		why = "expired: " + expiryList(cands)
	case ReasonManual:
		why = "disruption requested by an operator" + requestList(cands)
	case ReasonUnhealthy:
		why = "unhealthy: " + unhealthyList(cands)
	}
	what := "Deleting"
	if o.action == ActionReplace {
		what = "Replacing"
	}
	cmd.Why = fmt.Sprintf("%s %s (%s)", what, nodeList(cands), why)
	switch {
	case o.action == ActionReplace:
		cmd.Why += fmt.Sprintf("; %d new node(s) launch first (%s) for %s, and the drain starts once they are up", len(o.replacements), replacementList(o.replacements), podsOf(cands, len(o.moves)))
	case len(o.moves) > 0:
		cmd.Why += fmt.Sprintf("; %s fit on other nodes", podsOf(cands, len(o.moves)))
	default:
		cmd.Why += "; no pods to move"
	}
	if len(o.stranded) > 0 {
		cmd.Why += fmt.Sprintf("; %d pod(s) fit on no node and will be pending: %s", len(o.stranded), firstFew(o.stranded))
	}
	cmd.Why += "."
	return cmd
}

func driftList(cands []*candidate) string {
	parts := make([]string, 0, len(cands))
	for _, c := range cands {
		s := c.name() + " " + c.node.Drifted
		if c.node.DriftWhy != "" {
			s += " (" + c.node.DriftWhy + ")"
		}
		parts = append(parts, s)
	}
	return firstFew(parts)
}

func expiryList(cands []*candidate) string {
	parts := make([]string, 0, len(cands))
	for _, c := range cands {
		parts = append(parts, fmt.Sprintf("%s at %s", c.name(), c.node.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z")))
	}
	return firstFew(parts)
}

func unhealthyList(cands []*candidate) string {
	parts := make([]string, 0, len(cands))
	for _, c := range cands {
		parts = append(parts, c.name()+" "+c.node.Unhealthy)
	}
	return firstFew(parts)
}

func requestList(cands []*candidate) string {
	var parts []string
	for _, c := range cands {
		if c.node.RequestReason != "" {
			parts = append(parts, fmt.Sprintf("%s: %q", c.name(), c.node.RequestReason))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + firstFew(parts)
}

// firstFew joins up to five items, saying how many more there are.
func firstFew(items []string) string {
	sorted := slices.Clone(items)
	slices.Sort(sorted)
	if len(sorted) > 5 {
		return fmt.Sprintf("%s and %d more", strings.Join(sorted[:5], ", "), len(sorted)-5)
	}
	return strings.Join(sorted, ", ")
}
