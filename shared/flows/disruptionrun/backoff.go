package disruptionrun

import (
	"context"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// Replacement back-off: after n failed replacements in a NodePool and image since the pool last had a
// node initialize, no new replacement is launched there for min(ReplacementBackoffBase × 2^(n−1),
// ReplacementBackoffMax) after the last failure. A broken AMI then costs a few launches an hour, not one
// a minute, and a pool that brings a node up again (the image fixed or rolled back) starts afresh.
const (
	ReplacementBackoffBase = 5 * time.Minute
	ReplacementBackoffMax  = time.Hour
)

// backoff is a NodePool whose replacements are held back, and why.
type backoff struct {
	pool, image string
	failures    int
	until       time.Time
}

func (b backoff) String() string {
	image := b.image
	if image == "" {
		image = "no instance launched"
	}
	return fmt.Sprintf("%d replacement(s) in NodePool %s (image: %s) failed since a node of the pool last initialized; next replacement after %s",
		b.failures, b.pool, image, b.until.UTC().Format(time.RFC3339))
}

// replacementBackoffs returns the NodePools backing off at now, from the failures recorded on the
// commands (kept FinishedCommandRetention) and the claims' initialization times.
func replacementBackoffs(commands []state.DisruptionCommand, claims []state.Claim, now time.Time) map[string]backoff {
	lastInit := map[string]time.Time{}
	for _, c := range claims {
		if c.InitializedAt != nil && c.InitializedAt.After(lastInit[c.NodePool]) {
			lastInit[c.NodePool] = *c.InitializedAt
		}
	}
	type key struct{ pool, image string }
	series := map[key]*backoff{}
	for _, c := range commands {
		f := c.ReplacementFailure
		if f == nil || !f.At.After(lastInit[f.NodePool]) {
			continue
		}
		k := key{f.NodePool, f.ImageID}
		b := series[k]
		if b == nil {
			b = &backoff{pool: f.NodePool, image: f.ImageID}
			series[k] = b
		}
		b.failures++
		if f.At.After(b.until) {
			b.until = f.At // the last failure, until the delay is added below
		}
	}
	out := map[string]backoff{}
	for _, b := range series {
		delay := ReplacementBackoffMax
		if b.failures <= 6 {
			delay = min(ReplacementBackoffBase<<(b.failures-1), ReplacementBackoffMax)
		}
		b.until = b.until.Add(delay)
		if now.Before(b.until) && b.until.After(out[b.pool].until) {
			out[b.pool] = *b
		}
	}
	return out
}

// heldBack applies the replacement back-off, and the launch back-off of an EC2NodeClass whose instances
// die at launch (state.ClassBackoff, as the provisioner applies it), to a validated command, on the fresh
// read w. A command that launches nothing, or only in pools not backing off, goes as it is. A forceful command (expiry, an
// operator's request) goes without its replacements: its nodes are drained now, as Karpenter drains an
// expired node, and their pods wait for the provisioner. A graceful one is not executed, and says why.
// It returns the command to execute and whether to execute it.
func (r *Runner) heldBack(ctx context.Context, cmd disruption.Command, w *world, rep *Report) (disruption.Command, bool) {
	if len(cmd.Replacements) == 0 {
		return cmd, true
	}
	backoffs := replacementBackoffs(w.commands, w.claims, w.input.Now)
	for _, cp := range cmd.Replacements {
		var why string
		if b, ok := backoffs[cp.NodePool]; ok {
			why = b.String()
		} else if b, ok := w.launches.ClassBackoff(cp.NodePool, w.claims, w.input.Now); ok {
			why = b.String() // its instances die at launch: a replacement would too
		} else {
			continue
		}
		if !forceful(cmd.Reason) {
			r.rejected(ctx, cmd, "replacement back-off", why, rep)
			return cmd, false
		}
		cmd.Replacements, cmd.Action = nil, disruption.ActionDelete
		cmd.Why += " No replacement is launched: " + why + "."
		return cmd, true
	}
	return cmd, true
}
