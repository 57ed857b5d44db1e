package lifecycle

import (
	"context"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/reconcile"
)

// ReasonNodeLost is the decision reason when a pass finds a registered claim's Node gone while its
// instance runs (a Node deleted with Nodewright's finalizer stripped).
const ReasonNodeLost = "NodeLost"

// noteNodeLost records when the pass found the claim's Node gone (reconcile.NoteNodeLost), if the claim
// is still as the pass read it: from then on it stands for no capacity in a solve, and once the Node has
// stayed gone for reconcile.NodeLostGrace a later pass hands the claim to the termination flow. A claim
// this pass handed over already is left as it is.
func (p *passState) noteNodeLost(ctx context.Context, a reconcile.Action) {
	if p.sent[a.Claim] {
		return // handed to the termination flow by this pass already (its NodePool was removed, say)
	}
	subject := "nodeclaim/" + a.Claim
	now := p.r.deps.Now().UTC()
	ok, err := p.move(ctx, a.Claim, p.lifecycle[a.Claim], func(c *state.Claim) {
		if c.NodeLostAt == nil {
			c.NodeLostAt = &now
		}
	})
	if err != nil || !ok {
		if err != nil {
			p.fail(subject, err)
		}
		return
	}
	p.rep.NodesLost++
	msg := fmt.Sprintf("Node %s of NodeClaim %s is gone while its instance %s runs; unless it comes back within %s, the claim is handed to the termination flow",
		a.Node, a.Claim, a.Instance, reconcile.NodeLostGrace)
	p.wait(a.Claim, "NodeLost: "+msg)
	p.decide(ctx, subject, ReasonNodeLost, ReasonNodeLost, msg, map[string]string{"node": a.Node, "instanceId": a.Instance})
}

// clearNodeLost forgets a lost Node that is back (reconcile.ClearNodeLost): a kubelet registered it again.
func (p *passState) clearNodeLost(ctx context.Context, a reconcile.Action) {
	subject := "nodeclaim/" + a.Claim
	ok, err := p.move(ctx, a.Claim, p.lifecycle[a.Claim], func(c *state.Claim) { c.NodeLostAt = nil })
	if err != nil || !ok {
		if err != nil {
			p.fail(subject, err)
		}
		return
	}
	p.decide(ctx, subject, "NodeFound", "NodeFound", fmt.Sprintf("Node %s of NodeClaim %s is back", a.Node, a.Claim),
		map[string]string{"node": a.Node, "instanceId": a.Instance})
}
