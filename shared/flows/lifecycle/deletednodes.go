package lifecycle

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ReasonNodeDeleted is the termination reason of a claim whose Node was deleted (kubectl delete node):
// as in Karpenter, deleting the Node drains it and terminates its instance.
const ReasonNodeDeleted = "NodeDeleted"

// deletingNodes are the listed Nodes being deleted that Nodewright's finalizer still holds.
func (p *passState) deletingNodes() []*corev1.Node {
	var out []*corev1.Node
	for _, n := range p.w.nodes {
		if n.DeletionTimestamp != nil && slices.Contains(n.Finalizers, kube.TerminationFinalizer) {
			out = append(out, n)
		}
	}
	return out
}

// liveClaimOf finds the claim, not deleted as this pass left it, that stands for n: by its recorded Node
// name, else by providerID.
func (p *passState) liveClaimOf(n *corev1.Node) (state.Claim, bool) {
	var byProvider *state.Claim
	for i, c := range p.w.claims {
		if p.lifecycle[c.Name] == state.Deleted {
			continue
		}
		if c.NodeName == n.Name {
			return c, true
		}
		if n.Spec.ProviderID != "" && c.NodeProviderID() == n.Spec.ProviderID && byProvider == nil {
			byProvider = &p.w.claims[i]
		}
	}
	if byProvider != nil {
		return *byProvider, true
	}
	return state.Claim{}, false
}

// handOverDeletedNodes sends the claim of every deleting Node to the termination flow, which drains the
// Node, terminates the instance and then lets the Node go. A claim still in service is handed over once
// (again only after resendInterval, should that request be lost before the claim moved); one already
// draining or terminating is the termination flow's, and resendStalled looks after it.
func (p *passState) handOverDeletedNodes(ctx context.Context) {
	now := p.r.deps.Now()
	for _, n := range p.deletingNodes() {
		c, ok := p.liveClaimOf(n)
		if !ok {
			continue // releaseDeletedNodes decides, once the instance list is known
		}
		l := p.lifecycle[c.Name]
		switch {
		case !l.InService():
			p.wait("node/"+n.Name, fmt.Sprintf("NodeDeleting: NodeClaim %s is %s; the termination flow lets the Node go once its instance is gone", c.Name, l))
		case !handOverDue(c, now):
			p.wait("node/"+n.Name, fmt.Sprintf("NodeDeleting: NodeClaim %s was handed to the termination flow at %s", c.Name,
				c.TerminationSentAt.UTC().Format("15:04:05")))
		default:
			msg := fmt.Sprintf("Node %s is being deleted; NodeClaim %s is drained and its instance %s terminated before the Node goes",
				n.Name, c.Name, c.InstanceID)
			p.handOver(ctx, c, ReasonNodeDeleted, ReasonNodeDeleted, msg, map[string]string{"node": n.Name, "instanceId": c.InstanceID})
		}
	}
}
