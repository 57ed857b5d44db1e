package disruptionrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// MaxConsolidatableMarksPerRun bounds the claims one run marks or unmarks Consolidatable; the rest are
// written by the next runs. It matches the NodeClaim follower's bound, so every mark a run writes can
// reach its mirror within the run. A steady state changes none.
const MaxConsolidatableMarksPerRun = 50

// consolidatableChange is a change of a claim's Consolidatable mark that a read found: set (it has
// none and consolidateAfter has passed) or cleared (it has one and no longer should).
type consolidatableChange struct {
	claim string
	set   bool
}

// judgeConsolidatable notes in w the change of claim c's Consolidatable mark that its node calls for,
// as Karpenter's NodeClaim controller decides the condition: True once the node is initialized and its
// pool's consolidateAfter has passed since its initialization or its last pod event; absent while it
// has not, when consolidateAfter is Never and when the node is not initialized. Only claims in the
// initialized lifecycle are judged (a draining claim's mirror shows DisruptionReason; its mark stays),
// and a pool this run could not read changes nothing.
//
// guessed says the node's last pod event is only this process's first sight of it (a cold start, see
// podEvents): it keeps consolidation from taking the node until consolidateAfter has passed again, but
// no pod event was seen, so it does not clear a mark a warm process set. A cold start therefore never
// rewrites the marks of a whole cluster.
func judgeConsolidatable(w *world, node *disruption.Node, c state.Claim, pool *disruption.NodePool, guessed bool) {
	if c.Lifecycle != state.Initialized || pool == nil {
		return
	}
	at, applies := disruption.ConsolidatableAt(node, *pool)
	want := applies && !w.input.Now.Before(at)
	switch {
	case want && c.Consolidatable == nil:
		w.consolidatable = append(w.consolidatable, consolidatableChange{claim: c.Name, set: true})
	case !want && c.Consolidatable != nil && !(applies && guessed):
		w.consolidatable = append(w.consolidatable, consolidatableChange{claim: c.Name})
	}
}

// errUnchanged abandons a mark update the claim no longer needs (another run wrote it meanwhile).
var errUnchanged = errors.New("claim already as wanted")

// recordConsolidatable writes the Consolidatable marks the run's first read found changed, clears
// first (a pod event made the node unconsolidatable: the more useful news), then by claim name, at
// most MaxConsolidatableMarksPerRun, each with the claim's version check. The records written are
// followed to their mirrors with the run's other early changes (followEarly). A failure is a line of
// the run's errors and is tried again by the next run; it never fails the run.
func (r *Runner) recordConsolidatable(ctx context.Context, w *world, rep *Report) {
	changes := slices.Clone(w.consolidatable)
	slices.SortFunc(changes, func(a, b consolidatableChange) int {
		if a.set != b.set {
			if a.set {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.claim, b.claim)
	})
	for i, ch := range changes {
		if i >= MaxConsolidatableMarksPerRun || ctx.Err() != nil {
			rep.ConsolidatableLeft += len(changes) - i
			break
		}
		updated, err := r.deps.Store.UpdateClaim(ctx, ch.claim, func(c *state.Claim) error {
			switch {
			case c.Lifecycle != state.Initialized:
				return errClaimGone
			case ch.set && c.Consolidatable != nil, !ch.set && c.Consolidatable == nil:
				return errUnchanged
			case ch.set:
				// Dated when recorded (the run's read may have taken a while), as Karpenter dates a
				// condition when its controller writes it.
				c.Consolidatable = &state.ConsolidatableMark{Since: r.deps.Now().UTC()}
			default:
				c.Consolidatable = nil
			}
			return nil
		})
		if errors.Is(err, errClaimGone) || errors.Is(err, errUnchanged) || state.IsNotFound(err) {
			continue
		}
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("recording whether claim %s is consolidatable: %v", ch.claim, err))
			continue
		}
		rep.ConsolidatableMarks++
		rep.followed.claim(updated)
	}
}
