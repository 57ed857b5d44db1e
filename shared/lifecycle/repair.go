package lifecycle

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/instance"
	"github.com/nodewright/nodewright/shared/reconcile"
	"github.com/nodewright/nodewright/shared/scheduling"
	"github.com/nodewright/nodewright/shared/state"
)

// reconcileState maps a claim's lifecycle to what reconciliation cares about; deleted claims are left out.
var reconcileState = map[state.Lifecycle]reconcile.ClaimState{
	state.Pending:     reconcile.Pending,
	state.Launched:    reconcile.Launched,
	state.Registered:  reconcile.Registered,
	state.Initialized: reconcile.Registered,
	state.Draining:    reconcile.Draining,
	state.Terminating: reconcile.Draining,
}

// reconcileInput builds reconcile.Decide's input from the pass's lists, with the claims as this pass left
// them. Only Nodes that carry karpenter.sh/nodepool and an EC2 providerID count as Nodewright's: a Node
// without an instance id cannot be told to be a ghost.
func (p *passState) reconcileInput() reconcile.Input {
	in := reconcile.Input{Now: p.r.deps.Now(), ClaimsComplete: true, InstancesComplete: true, NodesComplete: true}
	for _, c := range p.w.claims {
		st, live := reconcileState[p.lifecycle[c.Name]]
		if !live {
			continue
		}
		rc := reconcile.Claim{Name: c.Name, State: st, InstanceID: c.InstanceID, NodeName: c.NodeName,
			CreatedAt: c.CreatedAt, LaunchedAt: c.CreatedAt}
		if c.LaunchedAt != nil {
			rc.LaunchedAt = *c.LaunchedAt
		}
		in.Claims = append(in.Claims, rc)
	}
	for _, i := range p.w.instances {
		in.Instances = append(in.Instances, reconcile.Instance{ID: i.ID, Claim: i.Tags[instance.TagNodeClaim], LaunchTime: i.LaunchTime})
	}
	for _, n := range p.w.nodes {
		if _, ok := n.Labels[scheduling.LabelNodePool]; !ok {
			continue
		}
		if id := instanceID(n.Spec.ProviderID); id != "" {
			in.Nodes = append(in.Nodes, reconcile.Node{Name: n.Name, InstanceID: id, Ready: ready(n)})
		}
	}
	return in
}

// repair decides with reconcile.Decide and carries out each action in the order given (terminate before
// forgetting). A claim is only deleted once its instance's termination succeeded; a Node is deleted with
// its terminated instance; a Ready Node is never deleted on the word of an instance list alone (the list
// may lag; a Node whose instance is really gone stops being Ready within a minute).
func (p *passState) repair(ctx context.Context) {
	res := reconcile.Decide(p.reconcileInput())
	if res.Skipped != "" {
		p.rep.Skipped = res.Skipped
		return
	}
	instances := map[string]instance.Instance{}
	for _, i := range p.w.instances {
		instances[i.ID] = i
	}
	failed := map[string]bool{}  // instances whose termination failed
	deleted := map[string]bool{} // Nodes deleted
	for _, a := range res.Actions {
		switch a.Kind {
		case reconcile.AdoptInstance:
			p.adopt(ctx, a, instances[a.Instance])
		case reconcile.TerminateInstance:
			if err := p.r.deps.Instances.Terminate(ctx, a.Instance); err != nil {
				failed[a.Instance] = true
				p.fail(subjectOf(a), err)
				continue
			}
			p.rep.Terminated++
			p.decide(ctx, subjectOf(a), string(a.Kind), reasonOf(a), a.Reason, map[string]string{"instanceId": a.Instance})
			for _, n := range p.w.nodes {
				if instanceID(n.Spec.ProviderID) == a.Instance && !deleted[n.Name] {
					p.deleteNode(ctx, n, a, deleted)
				}
			}
		case reconcile.DeleteNode:
			n := p.w.nodeByName(a.Node)
			if n == nil || deleted[n.Name] {
				continue
			}
			if ready(n) {
				p.wait("node/"+n.Name, "GhostNodeStillReady: its instance is not listed but the Node is Ready; deleted once it is not")
				continue
			}
			p.deleteNode(ctx, n, a, deleted)
		case reconcile.DeleteClaim:
			if a.Instance != "" && failed[a.Instance] {
				continue // its instance still runs: keep the claim that stands for it
			}
			p.deleteClaim(ctx, a)
		}
	}
}

// adopt gives a pending claim the instance its interrupted launch left behind.
func (p *passState) adopt(ctx context.Context, a reconcile.Action, inst instance.Instance) {
	subject := "nodeclaim/" + a.Claim
	ok, err := p.move(ctx, a.Claim, state.Pending, func(c *state.Claim) {
		c.Lifecycle, c.InstanceID, c.InstanceType, c.Zone = state.Launched, inst.ID, inst.InstanceType, inst.Zone
		c.CapacityType, c.ProviderID = inst.CapacityType, inst.ProviderID()
		if p.r.deps.Prices != nil {
			if price, ok := p.r.deps.Prices.Price(inst.InstanceType, inst.Zone, inst.CapacityType); ok {
				c.PricePerHour = price
			}
		}
	})
	if err != nil || !ok {
		if err != nil {
			p.fail(subject, err)
		}
		return
	}
	p.lifecycle[a.Claim] = state.Launched
	p.rep.Adopted++
	p.decide(ctx, subject, string(a.Kind), "Adopted", a.Reason, map[string]string{"instanceId": inst.ID,
		"instanceType": inst.InstanceType, "zone": inst.Zone, "capacityType": inst.CapacityType})
}

// deleteNode deletes a Node for action a.
func (p *passState) deleteNode(ctx context.Context, n *corev1.Node, a reconcile.Action, deleted map[string]bool) {
	if err := p.r.deps.NodeActions.DeleteNode(ctx, n.Name); err != nil {
		p.fail("node/"+n.Name, err)
		return
	}
	deleted[n.Name] = true
	p.rep.NodesDeleted++
	p.decide(ctx, "node/"+n.Name, string(reconcile.DeleteNode), reasonOf(a), a.Reason, map[string]string{"instanceId": a.Instance})
}

// deleteClaim marks a claim deleted, if it is still in the state the pass decided on.
func (p *passState) deleteClaim(ctx context.Context, a reconcile.Action) {
	subject := "nodeclaim/" + a.Claim
	from := p.lifecycle[a.Claim]
	ok, err := p.move(ctx, a.Claim, from, func(c *state.Claim) { c.Lifecycle = state.Deleted })
	if err != nil || !ok {
		if err != nil {
			p.fail(subject, err)
		}
		return
	}
	p.lifecycle[a.Claim] = state.Deleted
	p.rep.ClaimsDeleted++
	p.decide(ctx, subject, string(a.Kind), reasonOf(a), a.Reason, map[string]string{"instanceId": a.Instance})
}

// subjectOf is the decision subject of an action: its claim, else its Node, else its instance.
func subjectOf(a reconcile.Action) string {
	switch {
	case a.Claim != "":
		return "nodeclaim/" + a.Claim
	case a.Node != "":
		return "node/" + a.Node
	}
	return "instance/" + a.Instance
}

// reasonOf is the short reason of an action ("registration_timeout", "leaked", "ghost node").
func reasonOf(a reconcile.Action) string {
	r, _, _ := strings.Cut(a.Reason, ":")
	return r
}
