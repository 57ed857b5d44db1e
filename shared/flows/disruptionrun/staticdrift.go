package disruptionrun

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// MethodStaticDrift is the method of a drifted static node's 1:1 replacement (Karpenter's StaticDrift).
const MethodStaticDrift disruption.Method = "StaticDrift"

// staticDrift is what one static pool's drift roll does in a run.
type staticDrift struct {
	pool  string
	picks []*disruption.Node
	held  []string
}

// planStaticDrift picks the drifted nodes of static pool sp to replace now, one replacement each, as
// Karpenter's StaticDrift does: nothing while the pool holds more claims than replicas (a scale-down or
// a roll still under way: the claims that stand for a node, those active commands hold included), at
// most allowed (the pool's Drifted budget), and never so many that its claims (deleting ones included)
// plus the replacements pass limits.nodes. Nodes without pods go first, then those that drifted first.
// A node already going, not initialized, or protected by do-not-disrupt (unless its claim has a
// terminationGracePeriod, which bounds the drain: Karpenter's eventual disruption) is not picked. Pure.
func planStaticDrift(sp staticPool, claims []state.Claim, nodes []disruption.Node, allowed int, now time.Time) staticDrift {
	out := staticDrift{pool: sp.name()}
	var cands []*disruption.Node
	for i := range nodes {
		n := &nodes[i]
		if n.NodePool != out.pool || n.Drifted == "" {
			continue
		}
		switch {
		case n.Disrupting || n.Node.DeletionTimestamp != nil || hasDisruptedTaint(n.Node) || !n.Initialized:
			continue
		case staticProtection(n, now) != "" && n.TerminationGracePeriod == 0:
			out.held = append(out.held, fmt.Sprintf("node %s kept: %s", n.Name(), staticProtection(n, now)))
			continue
		}
		cands = append(cands, n)
	}
	if len(cands) == 0 {
		return out
	}
	count := provisioning.CountStatic(claims, out.pool)
	if count.Active > sp.replicas {
		out.held = append(out.held, fmt.Sprintf("%d drifted nodes wait: %d claims for %d replicas (a scale-down or a roll is under way)",
			len(cands), count.Active, sp.replicas))
		return out
	}
	slices.SortFunc(cands, func(a, b *disruption.Node) int {
		if ea, eb := staticNoPods(a), staticNoPods(b); ea != eb {
			if ea {
				return -1
			}
			return 1
		}
		if c := a.DriftedSince.Compare(b.DriftedSince); c != 0 {
			return c
		}
		return cmp.Compare(a.Name(), b.Name())
	})
	room := sp.nodeLimit - count.Active - count.Deleting
	n := min(int64(allowed), int64(len(cands)), max(room, 0))
	out.picks = cands[:n]
	if rest := int64(len(cands)) - n; rest > 0 {
		why := "the pool's Drifted budget"
		if room < int64(allowed) && room < int64(len(cands)) {
			why = fmt.Sprintf("limits.nodes %d (%d claims, %d deleting)", sp.nodeLimit, count.Active, count.Deleting)
		}
		out.held = append(out.held, fmt.Sprintf("%d drifted nodes wait for %s", rest, why))
	}
	return out
}

// staticNoPods reports whether no pod that must move runs on n.
func staticNoPods(n *disruption.Node) bool {
	return !slices.ContainsFunc(n.Pods, disruption.Reschedulable)
}

// driftStatic replaces drifted nodes of static NodePools 1:1 within their budgets (planStaticDrift),
// once per run before the first decision, after scaleDownStatic: each pick is one replace command with
// reason Drifted and exactly one replacement claim of the same pool (provisioning plans it as a static
// launch), carried out replacement first as every replace is (execute: ledger, record, replacement
// recorded, taint, launch; advance hands the node to the termination flow once the replacement has
// initialized, or rolls back). So the pool never holds fewer than replicas nodes in service for a roll,
// and never more than replicas plus its budget. It reads nothing beyond the run's read, and reports
// whether it executed a command.
func (r *Runner) driftStatic(ctx context.Context, runID string, w *world, rep *Report) bool {
	if len(w.static) == 0 || !w.launches.Settings().FeatureGates.StaticCapacity {
		return false
	}
	nodes, disrupting := poolCounts(w)
	base := scheduling.Input{DaemonSets: w.input.DaemonSets, Namespaces: w.input.Namespaces,
		MinValuesPolicy: w.input.MinValuesPolicy, IgnorePreferences: w.input.IgnorePreferences}
	changed := false
	for _, sp := range w.static {
		if ctx.Err() != nil {
			break
		}
		allowed := disruption.AllowedDisruptions(sp.pool, disruption.ReasonDrifted, w.input.Now, nodes[sp.name()], disrupting[sp.name()])
		plan := planStaticDrift(sp, w.claims, w.input.Nodes, allowed, w.input.Now)
		if len(plan.picks) == 0 && len(plan.held) == 0 {
			continue
		}
		line := fmt.Sprintf("static nodepool %s: replacing %d drifted nodes 1:1", plan.pool, len(plan.picks))
		if len(plan.held) > 0 {
			line += " (" + strings.Join(plan.held, "; ") + ")"
		}
		rep.StaticDrift = append(rep.StaticDrift, line)
		for i, n := range plan.picks {
			cp, err := w.launches.StaticReplacement(plan.pool, base)
			if err != nil {
				rep.StaticDrift = append(rep.StaticDrift, fmt.Sprintf("static nodepool %s: node %s not replaced: %v", plan.pool, n.Name(), err))
				break // the same answer for every node of the pool
			}
			cmd := disruption.Command{Reason: disruption.ReasonDrifted, Method: MethodStaticDrift, Action: disruption.ActionReplace,
				Nodes:        []disruption.CommandNode{{Name: n.Name(), Claim: n.Claim, NodePool: plan.pool}},
				Replacements: []scheduling.ClaimPlan{cp},
				Why: fmt.Sprintf("node %s of static nodepool %s drifted (%s): one replacement of the same pool first, then the node drains",
					n.Name(), plan.pool, firstOf(n.DriftWhy, n.Drifted))}
			if r.execute(ctx, fmt.Sprintf("%s-staticdrift-%s-%d-%d", runID, plan.pool, w.input.Now.UnixMilli(), i), cmd, w, rep) {
				changed = true
			}
		}
	}
	return changed
}
