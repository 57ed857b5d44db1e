package disruptionrun

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// advance takes every command in progress one step further and lifts stale taints:
//   - launching: when every replacement claim has initialized, the disrupted claims are handed to the
//     termination flow; when a replacement is gone (its launch failed, or it was removed) or has not
//     initialized within ReplacementTimeout of the command's start, the command is rolled back;
//   - terminating: the ledger reservations of disrupted claims that are gone are released (the
//     termination flow releases them too; this catches a release it missed), and once all are gone the
//     command is done;
//   - a karpenter.sh/disrupted taint on a Nodewright Node whose claim is in service (not draining,
//     terminating or deleted) and that no active command holds is lifted, as Karpenter does after a
//     restart: a command that crashed between its taint and its record.
//
// The cluster (snap, the run's first read) is read before the state, so a taint seen was written
// before the claims were read: a drain the termination flow starts (claim draining, then taint) is
// never mistaken for a stale taint.
func (r *Runner) advance(ctx context.Context, snap *kube.Snapshot, rep *Report) error {
	list, err := r.deps.Store.ListClaims(ctx)
	if err != nil {
		return fmt.Errorf("reading claims: %w", err)
	}
	commands, err := r.deps.Store.ListDisruptionCommands(ctx)
	if err != nil {
		return fmt.Errorf("reading disruption commands: %w", err)
	}
	claims := map[string]state.Claim{}
	for _, c := range list {
		claims[c.Name] = c
	}
	if err := r.readDeletedOf(ctx, commands, claims); err != nil {
		return err
	}
	now := r.deps.Now()
	held := map[string]bool{}
	for i := range commands {
		c := &commands[i]
		switch c.Phase {
		case state.CommandLaunching:
			r.advanceLaunching(ctx, c, claims, rep)
		case state.CommandTerminating:
			r.advanceTerminating(ctx, c, claims, rep)
		}
		if c.Phase.Active() {
			for _, d := range c.Candidates {
				held[d.Node] = true
			}
		}
	}
	r.releaseOrphans(ctx, list, commands, rep)
	byProvider, byNode := map[string]state.Claim{}, map[string]state.Claim{}
	for _, c := range list {
		if c.ProviderID != "" {
			byProvider[c.ProviderID] = c
		}
		if c.NodeName != "" {
			byNode[c.NodeName] = c
		}
	}
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		if n.Labels[scheduling.LabelNodePool] == "" || n.DeletionTimestamp != nil || held[n.Name] || !hasDisruptedTaint(n) {
			continue
		}
		c, ok := byProvider[n.Spec.ProviderID]
		if !ok || n.Spec.ProviderID == "" {
			c, ok = byNode[n.Name]
		}
		if !ok || !c.Lifecycle.InService() {
			continue
		}
		if err := r.deps.Nodes.Untaint(ctx, n.Name, apis.DisruptedNoScheduleTaint); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			continue
		}
		rep.TaintsLifted = append(rep.TaintsLifted, n.Name)
		r.record(ctx, []state.Decision{{Subject: "node/" + n.Name, ID: "taint-lifted-" + strconv.FormatInt(now.UnixMilli(), 10),
			Kind: KindTaintLifted, Reason: "NoCommand",
			Message: "lifted karpenter.sh/disrupted: no consolidation command holds the node and its claim " + c.Name + " is not draining",
			At:      now}}, rep)
	}
	return nil
}

// advanceLaunching hands a command's nodes over once its replacements are initialized, or ends the wait
// when one failed or is late (replacementFailed: a graceful command is rolled back, a forceful one drained).
func (r *Runner) advanceLaunching(ctx context.Context, c *state.DisruptionCommand, claims map[string]state.Claim, rep *Report) {
	now := r.deps.Now()
	ready := true
	var waitingOn, late string
	for _, name := range c.Replacements {
		cl, ok := claims[name]
		switch {
		case !ok || cl.Lifecycle == state.Deleted:
			r.replacementFailed(ctx, c, name, fmt.Sprintf("replacement %s failed to launch or was removed", name), claims, rep)
			return
		case !cl.Lifecycle.InService():
			r.replacementFailed(ctx, c, name, fmt.Sprintf("replacement %s is being removed (%s)", name, cl.Lifecycle), claims, rep)
			return
		case cl.InitializedAt == nil && cl.Lifecycle != state.Initialized:
			ready, waitingOn, late = false, name+" ("+string(cl.Lifecycle)+")", name
		}
	}
	if ready {
		r.handOver(ctx, c, rep)
		return
	}
	if now.Sub(c.StartedAt) > r.cfg.ReplacementTimeout {
		r.replacementFailed(ctx, c, late, fmt.Sprintf("replacement %s did not initialize within %s", waitingOn, r.cfg.ReplacementTimeout), claims, rep)
		return
	}
	for _, d := range c.Candidates {
		r.publishOnNodeAndClaim(ctx, d.Node, d.Claim, kube.Event{Reason: kube.ReasonDisruptionWaitingReadiness,
			Message: "waiting on readiness of replacement " + waitingOn}, rep)
	}
	rep.Advanced = append(rep.Advanced, c.ID+": waiting for "+waitingOn)
}

// Bounds on a handed-over claim that the termination flow has not started draining (its request was
// lost): it is sent again after resendAfter, and the command gives the claim up after giveUpAfter.
const (
	resendAfter = 2 * time.Minute
	giveUpAfter = 30 * time.Minute
)

// advanceTerminating releases the reservations of disrupted claims that are gone and finishes the
// command when all are. A claim still in service well after it was handed over (its request lost) is
// sent again; past giveUpAfter its reservation is released, its taint lifted and it is left in service.
func (r *Runner) advanceTerminating(ctx context.Context, c *state.DisruptionCommand, claims map[string]state.Claim, rep *Report) {
	now := r.deps.Now()
	var since time.Duration
	if c.HandedOverAt != nil {
		since = now.Sub(*c.HandedOverAt)
	}
	left := 0
	var abandoned []string
	for _, d := range c.Candidates {
		cl, ok := claims[d.Claim]
		switch {
		case ok && cl.Lifecycle.InService() && since > giveUpAfter:
			if d.Node == "" {
				abandoned = append(abandoned, d.Claim)
				break
			}
			if err := r.deps.Nodes.Untaint(ctx, d.Node, apis.DisruptedNoScheduleTaint); err != nil {
				rep.Errors = append(rep.Errors, err.Error())
				return
			}
			abandoned = append(abandoned, d.Claim)
		case ok && cl.Lifecycle.InService() && since > resendAfter:
			left++
			if err := r.deps.Terminations.Send(ctx, termination.Request{Claim: d.Claim, Reason: c.Reason, RequestedAt: now.UTC()}); err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("command %s: %v", c.ID, err))
			}
			continue
		case ok && cl.Lifecycle != state.Deleted:
			left++
			continue
		}
		if err := r.deps.Store.ReleaseDisruption(ctx, d.NodePool, d.Claim); err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			return
		}
	}
	if left > 0 {
		return
	}
	c.Phase, c.Outcome = state.CommandDone, "every disrupted node is gone"
	if len(abandoned) > 0 {
		c.Outcome = fmt.Sprintf("the termination flow never started draining %s within %s; left in service", strings.Join(abandoned, ", "), giveUpAfter)
	}
	stored, err := r.deps.Store.PutDisruptionCommand(ctx, *c)
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("recording command %s as done: %v", c.ID, err))
		return
	}
	*c = stored
	rep.Advanced = append(rep.Advanced, c.ID+": done")
}

// orphanGrace is how old a ledger reservation no active command holds must be before it is released:
// longer than any run takes between a reservation and its command record.
const orphanGrace = 5 * time.Minute

// releaseOrphans releases ledger reservations no active command holds (a run that crashed between its
// reservation and its command record, or a command finished without its release), unless the claim is
// draining or terminating: the termination flow releases those once the node is gone.
func (r *Runner) releaseOrphans(ctx context.Context, claims []state.Claim, commands []state.DisruptionCommand, rep *Report) {
	now := r.deps.Now()
	held := map[string]bool{}
	pools := map[string]bool{}
	for _, c := range commands {
		for _, d := range c.Candidates {
			pools[d.NodePool] = true
			if c.Phase.Active() {
				held[d.Claim] = true
			}
		}
	}
	byName := map[string]state.Claim{}
	for _, c := range claims {
		pools[c.NodePool] = true
		byName[c.Name] = c
	}
	for pool := range pools {
		rs, err := r.deps.Store.DisruptionReservations(ctx, pool)
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			continue
		}
		for _, res := range rs {
			c, ok := byName[res.Claim]
			if held[res.Claim] || now.Sub(res.At) < orphanGrace || (ok && (c.Lifecycle == state.Draining || c.Lifecycle == state.Terminating)) {
				continue
			}
			if err := r.deps.Store.ReleaseDisruption(ctx, pool, res.Claim); err != nil {
				rep.Errors = append(rep.Errors, err.Error())
				continue
			}
			rep.Advanced = append(rep.Advanced, fmt.Sprintf("released the orphaned budget slot of %s in %s", res.Claim, pool))
		}
	}
}

// readDeletedOf adds to claims (the live ones) the claims that active commands name and that are not
// live, each read by key: the live list holds no deleted claim, and a command tells a replacement that
// was deleted (its launch failed, its instance died) from one never written, and needs what the deleted
// one recorded (its image, for the replacement back-off).
func (r *Runner) readDeletedOf(ctx context.Context, commands []state.DisruptionCommand, claims map[string]state.Claim) error {
	for _, c := range commands {
		if !c.Phase.Active() {
			continue
		}
		names := append([]string(nil), c.Replacements...)
		for _, d := range c.Candidates {
			names = append(names, d.Claim)
		}
		for _, name := range names {
			if _, ok := claims[name]; ok || name == "" {
				continue
			}
			cl, err := r.deps.Store.GetClaim(ctx, name)
			if state.IsNotFound(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("reading claim %s of command %s: %w", name, c.ID, err)
			}
			claims[name] = cl
		}
	}
	return nil
}
