package lifecycle

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// keepFinalizers puts Nodewright's finalizer on the Node of every claim the pass read registered or
// initialized whose Node lacks it (Nodes registered before the finalizer existed, or a registration cut
// short), so that deleting any of Nodewright's Nodes goes through the termination flow. Nodes are
// written concurrently; those not started before the deadline margin are deferred.
func (p *passState) keepFinalizers(ctx context.Context) {
	type toFinalize struct {
		claim string
		node  *corev1.Node
	}
	var todo []toFinalize
	for _, c := range p.w.claims {
		if (c.Lifecycle != state.Registered && c.Lifecycle != state.Initialized) || p.lifecycle[c.Name] != c.Lifecycle {
			continue
		}
		n := p.w.nodeByName(c.NodeName)
		if n == nil || n.DeletionTimestamp != nil || n.Spec.ProviderID != c.NodeProviderID() ||
			slices.Contains(n.Finalizers, kube.TerminationFinalizer) || p.finalized[n.Name] {
			continue
		}
		todo = append(todo, toFinalize{claim: c.Name, node: n})
	}
	paced(ctx, p, todo, func(f toFinalize) string { return f.claim }, "giving its Node "+kube.TerminationFinalizer,
		func(ctx context.Context, f toFinalize) {
			if err := p.r.deps.NodeActions.AddFinalizer(ctx, f.node.Name, kube.TerminationFinalizer); err != nil {
				p.fail("node/"+f.node.Name, err)
			}
		})
}

// releaseDeletedNodes takes Nodewright's finalizer off every deleting Node that no live claim stands for
// and whose instance is neither in the pass's (complete) instance list nor live when EC2 is asked by id
// (a list may lag): nothing is left to drain or terminate, and the Node must not hang. A Node whose
// instance still runs keeps it until the instance is gone; a Node with a live claim is the termination
// flow's to release.
func (p *passState) releaseDeletedNodes(ctx context.Context) {
	running := map[string]bool{}
	for _, i := range p.w.instances {
		running[i.ID] = true
	}
	var release []*corev1.Node
	var ids []string
	for _, n := range p.deletingNodes() {
		if _, ok := p.liveClaimOf(n); ok {
			continue
		}
		id := instanceID(n.Spec.ProviderID)
		switch {
		case id == "":
			p.wait("node/"+n.Name, fmt.Sprintf("FinalizerKept: providerID %q names no EC2 instance, so whether it still runs cannot be told", n.Spec.ProviderID))
			continue
		case running[id]:
			p.wait("node/"+n.Name, fmt.Sprintf("FinalizerKept: instance %s still runs", id))
			continue
		}
		release, ids = append(release, n), append(ids, id)
	}
	if len(ids) == 0 {
		return
	}
	live, err := p.r.deps.Instances.LiveByID(ctx, ids)
	if err != nil {
		p.fail("instances", fmt.Errorf("confirming that deleted Nodes' instances are gone: %w", err))
		return
	}
	for _, i := range live {
		running[i.ID] = true
	}
	for _, n := range release {
		id := instanceID(n.Spec.ProviderID)
		if running[id] {
			p.wait("node/"+n.Name, fmt.Sprintf("FinalizerKept: instance %s is not listed yet but EC2 says it runs", id))
			continue
		}
		if err := p.r.deps.NodeActions.RemoveFinalizer(ctx, n.Name, kube.TerminationFinalizer); err != nil {
			p.fail("node/"+n.Name, err)
			continue
		}
		p.rep.FinalizersRemoved++
		p.decide(ctx, "node/"+n.Name, "FinalizerRemoved", "InstanceGone",
			fmt.Sprintf("Node %s is being deleted, no NodeClaim stands for it and its instance %s is gone; %s removed",
				n.Name, id, kube.TerminationFinalizer), map[string]string{"instanceId": id})
	}
}
