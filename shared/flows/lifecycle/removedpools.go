package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ReasonNodePoolDeleted is the termination reason of a claim whose NodePool left the configuration: as
// Karpenter cascades a NodePool's deletion to its NodeClaims, its nodes are drained (PDBs and
// terminationGracePeriod hold) and terminated.
const ReasonNodePoolDeleted = "NodePoolDeleted"

// A NodePool's item can go missing for a moment without the pool being deleted: a construct moved in the
// CDK app deletes the old item after writing the new one, a rollback rewrites it. So a missing pool's
// nodes go only once the pool has been missing for RemovedPoolPasses passes in a row spanning at least
// RemovedPoolWait, and then at most RemovedPoolBudgetPercent of them at a time.
const (
	RemovedPoolPasses = 3
	RemovedPoolWait   = 5 * time.Minute
	// RemovedPoolBudgetPercent is Karpenter's default disruption budget (10% of the pool's nodes, rounded
	// up): the pool's own budgets were deleted with it. The slots are taken on the disruption ledger, so
	// overlapping passes never exceed it; the termination flow gives each back when its node is gone.
	RemovedPoolBudgetPercent = 10
)

// handOverRemovedPools hands to the termination flow, within the budget, the claims in service of each
// NodePool that has been missing from the configuration long enough. A NodePool counts as present when
// its item is stored at all, whether or not it decodes and validates (those are the pass's problems, not
// deletions), so a bad edit never drains a pool. Nothing is decided when the NodePool items or the
// absences cannot be read, nor when there are no NodePools: an empty table after a broken deploy must not
// drain the cluster. Pending claims wait until they are launched.
func (p *passState) handOverRemovedPools(ctx context.Context) {
	items, err := p.r.deps.Store.ListConfig(ctx, state.KindNodePool)
	if err != nil {
		p.hold(fmt.Sprintf("removed NodePools: the NodePools could not be listed, nothing is decided: %v", err))
		return
	}
	present := map[string]bool{}
	for _, it := range items {
		present[it.Name] = true
	}
	for name := range p.w.pools {
		present[name] = true
	}
	orphans := map[string][]state.Claim{}
	var all []state.Claim
	for _, c := range p.w.claims {
		l := p.lifecycle[c.Name]
		if l.InService() && l != state.Pending && !present[c.NodePool] {
			orphans[c.NodePool] = append(orphans[c.NodePool], c)
			all = append(all, c)
		}
	}
	if len(present) == 0 {
		msg := fmt.Sprintf("the configuration holds no NodePool; the %d NodeClaims in service are left alone (an empty "+
			"configuration is taken for a broken deploy, not for the removal of every NodePool)", len(all))
		p.hold("removed NodePools: " + msg)
		if len(all) > 0 {
			p.decide(ctx, "nodepools", "NodePoolRemovalHeld", "NoNodePools", msg, map[string]string{"claims": claimNames(all)})
		}
		return
	}
	absences, err := p.r.deps.Store.PoolAbsences(ctx)
	if err != nil {
		p.hold(fmt.Sprintf("removed NodePools: the missing NodePools could not be read, nothing is decided: %v", err))
		return
	}
	for _, a := range absences {
		if _, still := orphans[a.NodePool]; !still {
			// Back in the configuration, or no claim of it left: a later absence starts over.
			if err := p.r.deps.Store.ClearPoolAbsence(ctx, a.NodePool); err != nil {
				p.fail("nodepool/"+a.NodePool, err)
			}
		}
	}
	now := p.r.deps.Now()
	pools := make([]string, 0, len(orphans))
	for pool := range orphans {
		pools = append(pools, pool)
	}
	sort.Strings(pools)
	for _, pool := range pools {
		p.handOverRemovedPool(ctx, pool, orphans[pool], now)
	}
}

// handOverRemovedPool notes one more pass without pool and, once it has been missing long enough, hands
// its claims over, as many as the budget has slots for.
func (p *passState) handOverRemovedPool(ctx context.Context, pool string, claims []state.Claim, now time.Time) {
	a, err := p.r.deps.Store.NotePoolAbsent(ctx, pool, now)
	if err != nil {
		p.fail("nodepool/"+pool, err)
		return
	}
	if a.Passes < RemovedPoolPasses || now.Sub(a.Since) < RemovedPoolWait {
		msg := fmt.Sprintf("NodePool %s is missing from the configuration (%d passes since %s); its %d NodeClaims are "+
			"drained once it has been missing for %d passes and %s", pool, a.Passes, a.Since.UTC().Format(time.RFC3339),
			len(claims), RemovedPoolPasses, RemovedPoolWait)
		p.hold("removed NodePools: " + msg)
		if a.Passes == 1 {
			p.decide(ctx, "nodepool/"+pool, "NodePoolRemovalPending", "NodePoolMissing", msg, map[string]string{"claims": claimNames(claims)})
		}
		return
	}
	allowed := (len(claims)*RemovedPoolBudgetPercent + 99) / 100
	waiting := 0
	for _, c := range claims {
		if !handOverDue(c, now) {
			continue
		}
		err := p.r.deps.Store.ReserveDisruption(ctx, pool, c.Name, allowed)
		if errors.Is(err, state.ErrBudgetExhausted) {
			waiting++
			continue
		}
		if err != nil {
			p.fail("nodeclaim/"+c.Name, err)
			continue
		}
		msg := fmt.Sprintf("NodePool %s is no longer in the configuration; NodeClaim %s is drained and terminated", pool, c.Name)
		p.handOver(ctx, c, ReasonNodePoolDeleted, ReasonNodePoolDeleted, msg, map[string]string{"nodePool": pool,
			"node": c.NodeName, "instanceId": c.InstanceID})
	}
	if waiting > 0 {
		p.hold(fmt.Sprintf("removed NodePools: %d NodeClaims of NodePool %s wait for its budget (%d at a time)", waiting, pool, allowed))
	}
}

// hold notes that a hand-over rule decided nothing, and why.
func (p *passState) hold(why string) {
	p.rep.Held = append(p.rep.Held, why)
}

func claimNames(cs []state.Claim) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
