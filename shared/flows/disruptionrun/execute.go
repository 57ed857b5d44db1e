package disruptionrun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// execute carries a validated command out, replacement first:
//  1. each node is reserved on the budget ledger, conditioned on the allowance (ledgerAllowance), so
//     overlapping runs can never exceed a budget; a refusal releases what the command took and drops it;
//  2. the command is recorded (state table, phase launching) with its replacements' claim names, before
//     anything changes in the cluster, so a crash anywhere after is advanced or rolled back by the next
//     run;
//  3. a replace records its replacement claims (pending, marked as replacing the nodes' claims), so a
//     provisioning run counts them in flight before it can see the nodes disrupted;
//  4. the nodes are tainted karpenter.sh/disrupted:NoSchedule;
//  5. the replacements are launched through the provisioning launch path (the claim name as the
//     ClientToken); termination waits until they initialize (advance). A delete hands its nodes to the
//     termination flow at once.
//
// It reports whether the command was executed (false: dropped or rolled back).
func (r *Runner) execute(ctx context.Context, id string, cmd disruption.Command, w *world, rep *Report) bool {
	var reserved []disruption.CommandNode
	for _, n := range cmd.Nodes {
		allowed := ledgerAllowance(w, n.NodePool, cmd.Reason)
		if forceful(cmd.Reason) || n.Name == "" {
			// Budgets do not hold back expiry, an operator's request or node repair, nor a static pool's
			// surplus claim that has no Node (nothing runs there to disrupt); the reservation still counts
			// against the graceful reasons' budgets while the node goes.
			allowed = math.MaxInt32
		}
		if err := r.deps.Store.ReserveDisruption(ctx, n.NodePool, n.Claim, allowed); err != nil {
			r.releaseAll(ctx, reserved, rep)
			stage := "budget ledger"
			if !errors.Is(err, state.ErrBudgetExhausted) {
				stage = "budget reservation"
			}
			r.rejected(ctx, cmd, stage, err.Error(), rep)
			return false
		}
		reserved = append(reserved, n)
	}
	rec := state.DisruptionCommand{ID: id, Phase: state.CommandLaunching, Reason: string(cmd.Reason), Method: string(cmd.Method),
		Action: string(cmd.Action), SavingsPerHour: cmd.SavingsPerHour, Why: cmd.Why, StartedAt: r.deps.Now().UTC()}
	var claims []string
	for _, n := range cmd.Nodes {
		rec.Candidates = append(rec.Candidates, state.DisruptedClaim{Claim: n.Claim, Node: n.Name, NodePool: n.NodePool})
		claims = append(claims, n.Claim)
	}
	for _, cp := range cmd.Replacements {
		rec.Replacements = append(rec.Replacements, r.deps.Launcher.ClaimName(cp.NodePool))
	}
	rec, err := r.deps.Store.CreateDisruptionCommand(ctx, rec)
	if err != nil {
		r.releaseAll(ctx, reserved, rep)
		r.rejected(ctx, cmd, "recording the command", err.Error(), rep)
		return false
	}
	// Replacement claims are recorded before the taint: a provisioning run that sees the tainted
	// nodes' pods also sees the replacements in flight for them, and launches nothing of its own.
	pending := make([]PendingLaunch, len(cmd.Replacements))
	renamed := false
	for i, cp := range cmd.Replacements {
		p, err := w.launches.Record(ctx, cp, rec.Replacements[i], claims)
		if err != nil {
			r.rollback(ctx, &rec, fmt.Sprintf("recording replacement %s failed: %v", rec.Replacements[i], err), nil, rep)
			return false
		}
		renamed = renamed || p.Name() != rec.Replacements[i] // the name drawn was taken; another was drawn
		pending[i], rec.Replacements[i] = p, p.Name()
	}
	if renamed {
		stored, err := r.deps.Store.PutDisruptionCommand(ctx, rec)
		if err != nil {
			// The next run finds the first name missing and rolls the command back.
			rep.Errors = append(rep.Errors, fmt.Sprintf("recording the replacements of command %s: %v", id, err))
		} else {
			rec = stored
		}
	}
	for _, n := range cmd.Nodes {
		if n.Name == "" {
			continue // a claim without a Node (static scale-down): nothing to taint
		}
		if err := r.deps.Nodes.Taint(ctx, n.Name, apis.DisruptedNoScheduleTaint); err != nil {
			r.rollback(ctx, &rec, fmt.Sprintf("tainting node %s failed: %v", n.Name, err), nil, rep)
			return false
		}
	}
	r.markCandidates(ctx, rec, cmd, rep)
	if len(cmd.Replacements) == 0 {
		rep.Commands = append(rep.Commands, cmd)
		r.record(ctx, commandDecisions(id, KindDisrupt, cmd, cmd.Why, nil, r.deps.Now()), rep)
		r.handOver(ctx, &rec, rep)
		return true
	}
	for i, p := range pending {
		launched, err := p.Launch(ctx)
		if err != nil && launched == nil {
			r.noCapacity(ctx, rec.Replacements[i], err, rep)
			r.replacementFailed(ctx, &rec, rec.Replacements[i], fmt.Sprintf("launching replacement %s failed: %v", rec.Replacements[i], err), nil, rep)
			return false
		}
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
		rep.followed.replacement(rec.Replacements[i])
		what := fmt.Sprintf("launching replacement %s (%s, %s, %s)", rec.Replacements[i], launched.InstanceType, launched.Zone, launched.CapacityType)
		for _, n := range cmd.Nodes {
			r.publishOnNodeAndClaim(ctx, n.Name, n.Claim, kube.Event{Reason: kube.ReasonDisruptionLaunching,
				Message: fmt.Sprintf("%s/%s: %s", cmd.Reason, cmd.Method, what)}, rep)
		}
	}
	rep.Commands = append(rep.Commands, cmd)
	r.record(ctx, commandDecisions(id, KindDisrupt, cmd, cmd.Why, rec.Replacements, r.deps.Now()), rep)
	for _, n := range cmd.Nodes {
		r.publishOnNodeAndClaim(ctx, n.Name, n.Claim, kube.Event{Reason: kube.ReasonDisruptionWaitingReadiness,
			Message: "waiting on readiness of replacement " + strings.Join(rec.Replacements, ", ")}, rep)
	}
	return true
}

// handOver sends a termination request for each disrupted claim still there and moves the command to
// terminating. A failed send leaves the command as it was, for the next run to send again.
func (r *Runner) handOver(ctx context.Context, c *state.DisruptionCommand, rep *Report) {
	now := r.deps.Now().UTC()
	for _, d := range c.Candidates {
		if err := r.deps.Terminations.Send(ctx, termination.Request{Claim: d.Claim, Reason: c.Reason, RequestedAt: now}); err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("command %s: %v", c.ID, err))
			return
		}
	}
	for _, d := range c.Candidates {
		r.publishOnNodeAndClaim(ctx, d.Node, d.Claim, kube.Event{Reason: kube.ReasonDisruptionTerminating,
			Message: fmt.Sprintf("disrupting node via %s: %s", c.Reason, c.Why)}, rep)
	}
	if rep.HandedOver == nil {
		rep.HandedOver = map[string]int{}
	}
	for _, d := range c.Candidates {
		rep.HandedOver[d.NodePool+"/"+c.Reason]++
	}
	c.Phase, c.HandedOverAt = state.CommandTerminating, &now
	stored, err := r.deps.Store.PutDisruptionCommand(ctx, *c)
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording command %s as terminating: %v", c.ID, err))
		return
	}
	*c = stored
	r.record(ctx, commandDecisions(c.ID, KindDisruptionTerminating, commandOf(*c),
		"replacements ready (or none needed): the nodes are handed to the termination flow", c.Replacements, now), rep)
	rep.Advanced = append(rep.Advanced, c.ID+": terminating")
}

// rollback calls a command off: its nodes' taints are lifted (unless their drain already began), its
// replacements handed to the termination flow (a replacement never launched finishes there at once), its
// ledger reservations released, and the command recorded as rolled back with why. claims, when set, are
// the claim records read by the caller; they tell only which replacements are gone. Each node's claim is
// read again right before its taint is lifted: another flow (an interruption, the lifecycle) may have
// started draining it since the caller read it, and its taint is then that flow's.
func (r *Runner) rollback(ctx context.Context, c *state.DisruptionCommand, why string, claims map[string]state.Claim, rep *Report) {
	now := r.deps.Now().UTC()
	var errs []string
	for _, d := range c.Candidates {
		cl, err := r.deps.Store.GetClaim(ctx, d.Claim)
		if state.IsNotFound(err) || (err == nil && !cl.Lifecycle.InService()) {
			continue // draining or gone: the termination flow owns it now
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("reading claim %s before lifting its taint: %v", d.Claim, err))
			continue
		}
		if d.Node == "" {
			continue
		}
		if err := r.deps.Nodes.Untaint(ctx, d.Node, apis.DisruptedNoScheduleTaint); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		r.unmark(ctx, d.Claim, c.ID, rep)
	}
	for _, name := range c.Replacements {
		if cl, ok := claims[name]; ok && cl.Lifecycle == state.Deleted {
			continue
		}
		if err := r.deps.Terminations.Send(ctx, termination.Request{Claim: name, Reason: ReasonRolledBack, RequestedAt: now}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		// Left as it is: the next run rolls back again (every step is idempotent).
		rep.Errors = append(rep.Errors, fmt.Sprintf("rolling back command %s: %s", c.ID, strings.Join(errs, "; ")))
		return
	}
	for _, d := range c.Candidates {
		if err := r.deps.Store.ReleaseDisruption(ctx, d.NodePool, d.Claim); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			return
		}
	}
	c.Phase, c.Outcome = state.CommandRolledBack, why
	rep.RolledBack++
	if stored, err := r.deps.Store.PutDisruptionCommand(ctx, *c); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording command %s as rolled back: %v", c.ID, err))
	} else {
		*c = stored
	}
	r.record(ctx, commandDecisions(c.ID, KindDisruptionRolledBack, commandOf(*c), "rolled back: "+why, c.Replacements, now), rep)
	for _, d := range c.Candidates {
		r.publishOnNodeAndClaim(ctx, d.Node, d.Claim, kube.Event{Type: corev1.EventTypeWarning, Reason: kube.ReasonDisruptionBlocked,
			Message: "consolidation rolled back: " + why}, rep)
	}
	rep.Advanced = append(rep.Advanced, fmt.Sprintf("%s: rolled back (%s)", c.ID, why))
}

// releaseAll gives back the ledger slots a dropped command took.
func (r *Runner) releaseAll(ctx context.Context, nodes []disruption.CommandNode, rep *Report) {
	for _, n := range nodes {
		if err := r.deps.Store.ReleaseDisruption(ctx, n.NodePool, n.Claim); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
	}
}

// forceful reports whether reason removes nodes whatever budgets say (Expired, Manual, Unhealthy).
func forceful(reason disruption.Reason) bool {
	return reason == disruption.ReasonExpired || reason == disruption.ReasonManual || reason == disruption.ReasonUnhealthy
}
