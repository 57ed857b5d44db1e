package disruptionrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// MaxStaticScaleDownPerRun bounds the claims one run gives up for static pools above their replicas
// (each a ledger write, a termination request and decision records); the rest follow in the next run,
// a minute later.
const MaxStaticScaleDownPerRun = 200

// scaleDownStatic brings each static NodePool (spec.replicas, gate StaticCapacity) that has more live
// claims than replicas down to its count, as Karpenter's static deprovisioning does, once per run
// before the first decision: planStaticScaleDown picks the surplus in Karpenter's order, and each pool's
// picks become one delete command with reason Overprovisioned, carried out as any delete is (execute:
// ledger reservation under the pool's budgets, command record, taint, termination request; the
// termination flow drains and removes; advance finishes the command). Nothing replaces them. Unlike
// Karpenter, the pool's budgets that list no reasons hold the nodes (a claim without a Node is not
// budgeted), and a node protected by do-not-disrupt is left. It reads nothing beyond the run's read (the
// claims, commands and Nodes of w), and reports whether it executed a command, so the run reads again
// before it decides.
func (r *Runner) scaleDownStatic(ctx context.Context, runID string, w *world, rep *Report) bool {
	if len(w.static) == 0 || !w.launches.Settings().FeatureGates.StaticCapacity {
		return false // with the gate off a static pool's count is not kept either way (as provisioning)
	}
	nodes, disrupting := poolCounts(w)
	left := MaxStaticScaleDownPerRun
	changed := false
	for _, sp := range w.static {
		if ctx.Err() != nil || left == 0 {
			break
		}
		allowed := disruption.AllowedDisruptions(sp.pool, ReasonOverprovisioned, w.input.Now, nodes[sp.name()], disrupting[sp.name()])
		plan := planStaticScaleDown(sp, w.claims, w.input.Nodes, w.reserved, w.input.Now, allowed, left)
		if plan.surplus() == 0 {
			continue
		}
		line := fmt.Sprintf("static nodepool %s: %d of %d replicas; removing %d", plan.pool, plan.live, plan.replicas, len(plan.picks))
		if len(plan.held) > 0 {
			line += " (" + strings.Join(plan.held, "; ") + ")"
		}
		rep.StaticScaleDown = append(rep.StaticScaleDown, line)
		if len(plan.picks) == 0 {
			r.publish(ctx, kube.Event{Object: kube.NodePoolObject(plan.pool), Reason: kube.ReasonDisruptionBlocked, Message: line}, rep)
			continue
		}
		left -= len(plan.picks)
		cmd := staticCommand(plan)
		if r.execute(ctx, fmt.Sprintf("%s-static-%s-%d", runID, plan.pool, w.input.Now.UnixMilli()), cmd, w, rep) {
			changed = true
		}
	}
	return changed
}

// staticCommand is plan's picks as one delete command, its Why naming each pick's rung of the order.
func staticCommand(plan staticScaleDown) disruption.Command {
	cmd := disruption.Command{Reason: ReasonOverprovisioned, Method: MethodStaticScaleDown, Action: disruption.ActionDelete}
	var parts []string
	for _, p := range plan.picks {
		cmd.Nodes = append(cmd.Nodes, disruption.CommandNode{Name: p.node, Claim: p.claim.Name, NodePool: plan.pool})
		what := "claim " + p.claim.Name
		if p.node != "" {
			what = "node " + p.node
		}
		if p.why == staticPickCost {
			parts = append(parts, fmt.Sprintf("%s (%s %.2f)", what, p.why, p.cost))
		} else {
			parts = append(parts, fmt.Sprintf("%s (%s)", what, p.why))
		}
	}
	cmd.Why = fmt.Sprintf("static nodepool %s has %d live claims for %d replicas: removing %s, with no replacement",
		plan.pool, plan.live, plan.replicas, strings.Join(parts, ", "))
	return cmd
}
