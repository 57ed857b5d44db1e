package lifecycle

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/nodewright/nodewright/shared/state"
)

// ReasonNodePoolDeleted is the termination reason of a claim whose NodePool left the configuration: as
// Karpenter cascades a NodePool's deletion to its NodeClaims, its nodes are drained (PDBs and
// terminationGracePeriod hold, disruption budgets do not) and terminated.
const ReasonNodePoolDeleted = "NodePoolDeleted"

// handOverRemovedPools hands to the termination flow each claim in service whose NodePool is no longer
// in the configuration. A NodePool counts as present when its item is stored at all, whether or not it
// decodes and validates (those are the pass's problems, not deletions), so a bad edit never drains a
// pool. Nothing is decided when the NodePool items cannot be listed, nor when there are none: an empty
// table after a broken deploy must not drain the cluster. Pending claims wait until they are launched.
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
	var orphans []state.Claim
	for _, c := range p.w.claims {
		l := p.lifecycle[c.Name]
		if l.InService() && l != state.Pending && !present[c.NodePool] {
			orphans = append(orphans, c)
		}
	}
	if len(present) == 0 {
		msg := fmt.Sprintf("the configuration holds no NodePool; the %d NodeClaims in service are left alone (an empty "+
			"configuration is taken for a broken deploy, not for the removal of every NodePool)", len(orphans))
		p.hold("removed NodePools: " + msg)
		if len(orphans) > 0 {
			p.decide(ctx, "nodepools", "NodePoolRemovalHeld", "NoNodePools", msg, map[string]string{"claims": claimNames(orphans)})
		}
		return
	}
	now := p.r.deps.Now()
	for _, c := range orphans {
		if !handOverDue(c, now) {
			continue
		}
		msg := fmt.Sprintf("NodePool %s is no longer in the configuration; NodeClaim %s is drained and terminated", c.NodePool, c.Name)
		p.handOver(ctx, c, ReasonNodePoolDeleted, ReasonNodePoolDeleted, msg, map[string]string{"nodePool": c.NodePool,
			"node": c.NodeName, "instanceId": c.InstanceID})
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
