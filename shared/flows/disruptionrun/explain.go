package disruptionrun

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// Decision kinds this package records (state.Decision.Kind), under node/NAME and nodeclaim/NAME.
const (
	// KindDisrupt: a command was executed (Reason is Empty or Underutilized).
	KindDisrupt = "Disrupt"
	// KindUnconsolidatable: the node was kept; the message says why.
	KindUnconsolidatable = "Unconsolidatable"
	// KindDisruptionRejected: a decided command was not executed (validation, budget ledger, launch).
	KindDisruptionRejected = "DisruptionRejected"
	// KindDisruptionTerminating: the replacements are initialized; the nodes were handed to termination.
	KindDisruptionTerminating = "DisruptionTerminating"
	// KindDisruptionRolledBack: the command was called off; its taints lifted, replacements removed.
	KindDisruptionRolledBack = "DisruptionRolledBack"
	// KindTaintLifted: a stale karpenter.sh/disrupted taint (no command, no drain) was lifted.
	KindTaintLifted = "DisruptionTaintLifted"
)

// keptMemo is what was last recorded about a kept node.
type keptMemo struct {
	reason string
	at     time.Time
}

// recordKept records the nodes the engine kept: a decision under node/NAME (so `nodewright explain
// node/NAME` answers "why not this node?") and an Unconsolidatable event on the Node and on its claim's
// NodeClaim mirror (as Karpenter publishes it on both; at most MaxClaimEvents a run on the mirrors, apart
// from the disruption progress Events), only when the reason changed or KeptEvery has passed since it
// was last recorded, so a steady cluster does not write an item per node every minute. Nodes Nodewright
// does not manage are not recorded.
func (r *Runner) recordKept(ctx context.Context, w *world, kept []disruption.Kept, rep *Report) {
	now := r.deps.Now()
	nodes := map[string]*corev1.Node{}
	for i := range w.snap.Nodes {
		nodes[w.snap.Nodes[i].Name] = &w.snap.Nodes[i]
	}
	var ds []state.Decision
	var events []kube.Event
	var onClaims []claimEvent
	r.mu.Lock()
	present := map[string]bool{}
	for _, k := range kept {
		present[k.Node] = true
		if k.NodePool == "" {
			continue
		}
		if m, ok := r.kept[k.Node]; ok && m.reason == k.Reason && now.Sub(m.at) < r.cfg.KeptEvery {
			continue
		}
		r.kept[k.Node] = keptMemo{reason: k.Reason, at: now}
		ds = append(ds, state.Decision{Subject: "node/" + k.Node, ID: "kept-" + strconv.FormatInt(now.UnixMilli(), 10),
			Kind: KindUnconsolidatable, Reason: "Kept", Message: k.Reason, At: now,
			Details: map[string]string{"nodePool": k.NodePool, "claim": w.claimOf[k.Node].Name}})
		if n := nodes[k.Node]; n != nil {
			events = append(events, kube.Event{Object: kube.NodeObject(n), Reason: kube.ReasonUnconsolidatable, Message: k.Reason})
		}
		if c := w.claimOf[k.Node].Name; c != "" && len(onClaims) < MaxClaimEvents-rep.UnconsolidatableClaimEvents {
			onClaims = append(onClaims, claimEvent{claim: c, event: kube.Event{Reason: kube.ReasonUnconsolidatable, Message: k.Reason}})
		}
	}
	for name := range r.kept {
		if !present[name] {
			delete(r.kept, name) // disrupted or gone: a later keep is news
		}
	}
	r.mu.Unlock()
	if len(ds) > 0 {
		if err := r.deps.Store.RecordDecisions(ctx, ds); err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("recording %d kept nodes: %v", len(ds), err))
		}
	}
	for _, e := range events {
		r.publish(ctx, e, rep)
	}
	for _, ce := range onClaims {
		r.publishKeptOnClaim(ctx, ce, rep)
	}
}

// commandDecisions are a command's decision records: one under each disrupted node and claim, and one
// under each replacement claim.
func commandDecisions(id, kind string, cmd disruption.Command, message string, replacements []string, at time.Time) []state.Decision {
	details := map[string]string{"command": id, "method": string(cmd.Method), "action": string(cmd.Action),
		"savingsPerHour": strconv.FormatFloat(cmd.SavingsPerHour, 'f', 4, 64)}
	var nodes []string
	for _, n := range cmd.Nodes {
		nodes = append(nodes, n.Name)
	}
	details["nodes"] = strings.Join(nodes, ",")
	if len(replacements) > 0 {
		details["replacements"] = strings.Join(replacements, ",")
	}
	var ds []state.Decision
	add := func(subject string) {
		ds = append(ds, state.Decision{Subject: subject, ID: id + "-" + strings.ToLower(kind), Kind: kind,
			Reason: string(cmd.Reason), Message: message, Details: details, At: at})
	}
	for _, n := range cmd.Nodes {
		if n.Name != "" { // a static pool's claim without a Node is recorded under its NodeClaim alone
			add("node/" + n.Name)
		}
		if n.Claim != "" {
			add("nodeclaim/" + n.Claim)
		}
	}
	for _, name := range replacements {
		add("nodeclaim/" + name)
	}
	return ds
}

// commandOf is the engine's view of a recorded command, enough for its decision records.
func commandOf(c state.DisruptionCommand) disruption.Command {
	cmd := disruption.Command{Reason: disruption.Reason(c.Reason), Method: disruption.Method(c.Method),
		Action: disruption.Action(c.Action), SavingsPerHour: c.SavingsPerHour, Why: c.Why}
	for _, d := range c.Candidates {
		cmd.Nodes = append(cmd.Nodes, disruption.CommandNode{Name: d.Node, Claim: d.Claim, NodePool: d.NodePool})
	}
	return cmd
}

// rejected records a command that was decided but not executed, with an Event on each of its nodes
// (rejectedEvent says which).
func (r *Runner) rejected(ctx context.Context, cmd disruption.Command, stage, why string, rep *Report) {
	now := r.deps.Now()
	id := "rejected-" + strconv.FormatInt(now.UnixMilli(), 10)
	msg := fmt.Sprintf("%s %s (%s) not executed: %s failed: %s", cmd.Action, nodeNames(cmd), cmd.Reason, stage, why)
	rep.Rejected = append(rep.Rejected, msg)
	r.record(ctx, commandDecisions(id, KindDisruptionRejected, cmd, msg, nil, now), rep)
	for _, n := range cmd.Nodes {
		e := rejectedEvent(cmd, n.Name, stage, why)
		r.publish(ctx, e, rep)
		if e.Reason == kube.ReasonDisruptionBlocked {
			r.publishOnClaim(ctx, n.Claim, e, rep)
		}
	}
}

// record writes decisions; a failure goes into the report and undoes nothing.
func (r *Runner) record(ctx context.Context, ds []state.Decision, rep *Report) {
	if len(ds) == 0 {
		return
	}
	if err := r.deps.Store.RecordDecisions(ctx, ds); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording decisions: %v", err))
	}
}

// publish sends an Event, best effort.
func (r *Runner) publish(ctx context.Context, e kube.Event, rep *Report) {
	if r.deps.Events == nil || e.Object.Name == "" { // a claim without a Node has no object to publish on
		return
	}
	if _, err := r.deps.Events.Publish(ctx, e); err != nil {
		rep.Errors = append(rep.Errors, err.Error())
	}
}

func nodeRef(name string) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: name}
}

func nodeNames(cmd disruption.Command) string {
	var names []string
	for _, n := range cmd.Nodes {
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}

// blockedPools publishes DisruptionBlocked on each NodePool whose budgets allow no disruption for a
// consolidation reason while it has nodes (the Recorder drops repeats within its window).
func (r *Runner) blockedPools(ctx context.Context, w *world, rep *Report) {
	if w.input.Incomplete != "" {
		return
	}
	nodes := map[string]int{}
	for i := range w.input.Nodes {
		if n := &w.input.Nodes[i]; n.NodePool != "" && n.Initialized {
			nodes[n.NodePool]++
		}
	}
	for _, p := range w.input.NodePools {
		if nodes[p.Name()] == 0 {
			continue
		}
		for _, reason := range []disruption.Reason{disruption.ReasonEmpty, disruption.ReasonUnderutilized} {
			if w.allowed[p.Name()][reason] == 0 {
				r.publish(ctx, kube.Event{Object: kube.NodePoolObject(p.Name()), Reason: kube.ReasonDisruptionBlocked,
					Message: fmt.Sprintf("the budgets of NodePool %s allow no %s consolidation now (%d nodes)", p.Name(), reason, nodes[p.Name()])}, rep)
			}
		}
	}
}
