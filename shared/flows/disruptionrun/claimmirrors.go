package disruptionrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// ClaimMirrors writes the NodeClaim mirrors of the claims a run changed, right after the run; nil writes
// none (the lifecycle function's sweep writes them then). *mirror.Follower satisfies it: bounded in count
// and in time (taken from the run's deadline), on change only, never failing the run.
type ClaimMirrors interface {
	Follow(ctx context.Context, claims []state.Claim) mirror.FollowReport
}

var _ ClaimMirrors = (*mirror.Follower)(nil)

// followed collects, during a run, the claims whose disruption state it committed (the records the
// writes returned) and the replacements it launched (read back at the end).
type followed struct {
	claims       []state.Claim
	replacements []string
	// early is the follow of the changes the run recorded before its first decision, under way beside
	// the run (followEarly); nil when none was started.
	early chan mirror.FollowReport
}

func (f *followed) claim(c state.Claim)  { f.claims = append(f.claims, c) }
func (f *followed) replacement(n string) { f.replacements = append(f.replacements, n) }

// followMirrors writes the NodeClaim mirrors of what the run changed: the candidates of the commands it
// started (DisruptionReason), the claims whose drift it recorded or cleared (Drifted), the marks it
// cleared, and the replacements it launched. It runs after the run's own writes and after the lease is
// given back, so a slow API server never costs a run its work; what the follower's bounds leave is
// counted in Report.ClaimMirrorsLeft and written by the lifecycle's next sweep.
func (r *Runner) followMirrors(ctx context.Context, rep *Report) {
	f := rep.followed
	rep.followed = followed{}
	if f.early != nil {
		rep.addFollow(<-f.early)
	}
	if r.deps.ClaimMirrors == nil || len(f.claims)+len(f.replacements) == 0 {
		return
	}
	claims := f.claims
	for i, name := range f.replacements {
		if i >= mirror.DefaultFollowMaxWrites || ctx.Err() != nil {
			rep.ClaimMirrorsLeft += len(f.replacements) - i
			break
		}
		c, err := r.deps.Store.GetClaim(ctx, name)
		if err != nil {
			if !state.IsNotFound(err) {
				rep.ClaimMirrorsLeft++
			}
			continue
		}
		claims = append(claims, c)
	}
	rep.addFollow(r.deps.ClaimMirrors.Follow(ctx, claims))
}

// addFollow counts a follow's outcome in the report.
func (rep *Report) addFollow(out mirror.FollowReport) {
	rep.ClaimMirrorsWritten += out.Written
	rep.ClaimMirrorsLeft += out.Left
	for _, e := range out.Errors {
		rep.Errors = append(rep.Errors, "nodeclaim mirrors: "+e)
	}
}

// followEarly starts following the claims the run changed before its first decision (Drifted set or
// cleared, stale marks cleared, Consolidatable set or cleared), beside the run: a run that goes on to
// validate and execute a command takes the validation delay and more, and these mirrors need not wait
// for it. The follower's own bounds hold (50 claims, 3 s, never near the deadline); the decision is CPU
// and the follow mostly waits on the API server, so the run loses no time to it. A mirror the run's
// later changes rewrite is not flapped: a write from an older record of a claim is refused by its
// claim-version check. followMirrors waits for it and counts its outcome.
func (r *Runner) followEarly(ctx context.Context, rep *Report) {
	claims := rep.followed.claims
	if r.deps.ClaimMirrors == nil || len(claims) == 0 || rep.followed.early != nil {
		return
	}
	rep.followed.claims = nil
	done := make(chan mirror.FollowReport, 1)
	rep.followed.early = done
	go func() { done <- r.deps.ClaimMirrors.Follow(ctx, claims) }()
}

// markCandidates records on each candidate's claim that the command holds it (state.DisruptingMark):
// its mirror shows DisruptionReason from then on, as Karpenter's NodeClaim does once its Node is tainted.
// A claim no longer in service (draining already) is left as it is. A failure is reported, not fatal: the
// mark only shows the command, which the ledger and the command record carry.
func (r *Runner) markCandidates(ctx context.Context, rec state.DisruptionCommand, cmd disruption.Command, rep *Report) {
	now := r.deps.Now().UTC()
	for _, n := range cmd.Nodes {
		c, err := r.deps.Store.UpdateClaim(ctx, n.Claim, func(c *state.Claim) error {
			if !c.Lifecycle.InService() {
				return errClaimGone
			}
			c.Disrupting = &state.DisruptingMark{Command: rec.ID, Reason: rec.Reason, Since: now, Replacements: rec.Replacements}
			return nil
		})
		if errors.Is(err, errClaimGone) || state.IsNotFound(err) {
			continue
		}
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("marking claim %s disrupted by command %s: %v", n.Claim, rec.ID, err))
			continue
		}
		rep.followed.claim(c)
	}
}

// unmark clears the mark of command id (or, with id empty, any mark) from claim name, if it is still
// there; the claim's record as written is followed to its mirror.
func (r *Runner) unmark(ctx context.Context, name, id string, rep *Report) {
	c, err := r.deps.Store.UpdateClaim(ctx, name, func(c *state.Claim) error {
		if c.Disrupting == nil || (id != "" && c.Disrupting.Command != id) {
			return errClaimGone
		}
		c.Disrupting = nil
		return nil
	})
	if errors.Is(err, errClaimGone) || state.IsNotFound(err) {
		return
	}
	if err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("clearing the disruption mark of claim %s: %v", name, err))
		return
	}
	rep.followed.claim(c)
}

// clearStaleMarks clears the marks of in-service claims that no active command holds any more (no
// ledger reservation): a command rolled back by a run that died before clearing them, or one whose
// marks outlived it. Draining and terminating claims keep theirs: their lifecycle says the rest.
func (r *Runner) clearStaleMarks(ctx context.Context, w *world, rep *Report) {
	for _, c := range w.claims {
		if c.Disrupting != nil && c.Lifecycle.InService() && !w.reserved[c.Name] {
			r.unmark(ctx, c.Name, "", rep)
		}
	}
}
