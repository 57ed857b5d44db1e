package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ReasonRegistered is the Event reason on a Node that was registered for its claim.
const ReasonRegistered kube.Reason = "Registered"

// movedError says a claim left the state a pass read it in before the pass could write it; the pass
// leaves it to whoever moved it.
type movedError struct{ to state.Lifecycle }

func (e *movedError) Error() string { return "moved to " + string(e.to) + " meanwhile" }

// move changes the claim's lifecycle from `from` (as read) with mutate. ok is false when someone else
// moved the claim in between; that is not an error.
func (p *passState) move(ctx context.Context, name string, from state.Lifecycle, mutate func(*state.Claim)) (bool, error) {
	_, err := p.r.deps.Store.UpdateClaim(ctx, name, func(c *state.Claim) error {
		if c.Lifecycle != from {
			return &movedError{to: c.Lifecycle}
		}
		mutate(c)
		return nil
	})
	var moved *movedError
	if errors.As(err, &moved) {
		p.locked(func() { p.lifecycle[name] = moved.to })
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("updating claim: %w", err)
	}
	return true, nil
}

// moveListed is move for a claim as the pass listed it: it writes the change conditionally on that very
// version, without reading the claim again (a sweep lists the claims strongly consistent, so they are
// current unless someone wrote since); when the version is not current any more (a write since, or a
// list from the eventually consistent index that lags), it moves as move does, from a fresh read.
func (p *passState) moveListed(ctx context.Context, listed state.Claim, from state.Lifecycle, mutate func(*state.Claim)) (bool, error) {
	if listed.Lifecycle == from {
		next := listed
		mutate(&next)
		_, err := p.r.deps.Store.PutClaim(ctx, listed, next)
		if err == nil {
			return true, nil
		}
		if !state.IsConflict(err) {
			return false, fmt.Errorf("updating claim: %w", err)
		}
	}
	return p.move(ctx, listed.Name, from, mutate)
}

// register brings each launched claim's Node, once it has joined, into the cluster, in an order that is
// safe against a drain starting meanwhile: first the claim learns its Node (NodeName recorded, moved to
// registered, a conditional write), then the Node gets Nodewright's finalizer, the NodePool's taints and
// labels, and only then, if the claim is still in service, is karpenter.sh/unregistered lifted. So the
// termination flow always finds the Node of a claim it drains, and a Node whose claim is on its way out
// never opens to pods. A claim read registered whose Node still has the unregistered taint (a pass cut
// short) is finished the same way. Claims are worked on concurrently (see paced), each in that order;
// those not started before the deadline margin are deferred to the next pass.
func (p *passState) register(ctx context.Context) {
	var todo []toRegister
	for _, c := range p.w.claims {
		if c.Lifecycle != state.Launched && c.Lifecycle != state.Registered {
			continue
		}
		reg := Register(ExpectedFor(c, p.w.pools[c.NodePool]), p.w.nodes)
		if reg.Node == nil {
			if c.Lifecycle == state.Launched {
				p.wait(c.Name, reg.Reason)
			}
			continue
		}
		if c.Lifecycle == state.Registered && (reg.Node.Name != c.NodeName || reg.Patch.Empty()) {
			continue // registered whole; initialize takes it from here
		}
		if reg.Node.DeletionTimestamp != nil {
			p.wait(c.Name, "NodeDeleting: the Node is being deleted before it was registered")
			continue
		}
		todo = append(todo, toRegister{claim: c, reg: reg})
	}
	paced(ctx, p, todo, func(r toRegister) string { return r.claim.Name }, "registering its Node", p.registerOne)
}

// toRegister is one claim whose Node the pass registers, or finishes registering.
type toRegister struct {
	claim state.Claim
	reg   Registration
}

// registerOne registers one claim's Node (see register); it runs on a worker.
func (p *passState) registerOne(ctx context.Context, r toRegister) {
	c, reg, node := r.claim, r.reg, r.reg.Node
	subject := "nodeclaim/" + c.Name
	if c.Lifecycle == state.Launched {
		for _, w := range reg.Warnings {
			reason, msg, _ := strings.Cut(w, ": ")
			p.event(ctx, node, corev1.EventTypeWarning, kube.Reason(reason), msg)
		}
		ok, err := p.moveListed(ctx, c, state.Launched, func(cur *state.Claim) {
			cur.Lifecycle, cur.NodeName = state.Registered, node.Name
			if cur.ProviderID == "" {
				cur.ProviderID = node.Spec.ProviderID
			}
		})
		if err != nil || !ok {
			if err != nil {
				p.fail(subject, err)
			}
			return
		}
		p.locked(func() {
			p.lifecycle[c.Name] = state.Registered
			p.rep.Registered++
			if p.rep.NodesCreated == nil {
				p.rep.NodesCreated = map[PoolZone]int{}
			}
			p.rep.NodesCreated[PoolZone{NodePool: c.NodePool, Zone: c.Zone}]++
		})
		msg := fmt.Sprintf("Node %s registered for NodeClaim %s (instance %s)", node.Name, c.Name, c.InstanceID)
		p.event(ctx, node, corev1.EventTypeNormal, ReasonRegistered, msg)
		p.decide(ctx, subject, "Registered", "Registered", msg, map[string]string{"node": node.Name,
			"instanceId": c.InstanceID, "warnings": strings.Join(reg.Warnings, "; ")})
	}
	if err := p.openNode(ctx, c.Name, node, reg.Patch); err != nil {
		p.fail(subject, err)
	}
}

// openNode finishes a registration whose claim already names the Node: finalizer, taints and labels, then
// the unregistered taint is lifted, unless the claim has meanwhile left service (then it stays, and the
// Node never takes pods; the termination flow has its name and drains it).
func (p *passState) openNode(ctx context.Context, claim string, node *corev1.Node, patch Patch) error {
	if err := p.r.deps.NodeActions.AddFinalizer(ctx, node.Name, kube.TerminationFinalizer); err != nil {
		return err
	}
	p.locked(func() { p.finalized[node.Name] = true })
	lift := patch.RemoveTaints
	patch.RemoveTaints = nil
	if err := p.apply(ctx, node, patch); err != nil {
		return err
	}
	if len(lift) == 0 {
		return nil
	}
	cur, err := p.r.deps.Store.GetClaim(ctx, claim)
	if err != nil {
		return fmt.Errorf("reading the claim again before lifting %s: %w", UnregisteredTaintKey, err)
	}
	if !cur.Lifecycle.InService() {
		p.locked(func() { p.lifecycle[claim] = cur.Lifecycle })
		p.wait(claim, fmt.Sprintf("ClaimLeftService: the claim is %s; %s stays on Node %s", cur.Lifecycle, UnregisteredTaintKey, node.Name))
		return nil
	}
	return p.apply(ctx, node, Patch{RemoveTaints: lift})
}

// initialize labels each registered claim's Node initialized once it is Ready, its startup and ephemeral
// taints are gone and its extended resources are there, and moves the claim to initialized. Only claims
// registered when the pass read them are looked at: the Node list predates this pass's own patches.
// Claims are worked on concurrently; those not started before the deadline margin are deferred.
func (p *passState) initialize(ctx context.Context) {
	var todo []toInitialize
	for _, c := range p.w.claims {
		if c.Lifecycle != state.Registered {
			continue
		}
		exp := ExpectedFor(c, p.w.pools[c.NodePool])
		node := p.w.nodeByName(c.NodeName)
		if node == nil || node.Spec.ProviderID != exp.ProviderID {
			node = Register(exp, p.w.nodes).Node
		}
		if node == nil {
			p.wait(c.Name, "NodeNotFound")
			continue
		}
		if hasTaint(node, UnregisteredTaintKey) {
			p.wait(c.Name, "Unregistered: "+UnregisteredTaintKey+" is still on the Node")
			continue
		}
		init := Initialize(exp, node)
		if !init.Initialized {
			p.wait(c.Name, init.Reason)
			continue
		}
		todo = append(todo, toInitialize{claim: c, node: node, patch: init.Patch})
	}
	paced(ctx, p, todo, func(in toInitialize) string { return in.claim.Name }, "initializing its Node", p.initializeOne)
}

// toInitialize is one registered claim whose Node is ready to be labelled initialized.
type toInitialize struct {
	claim state.Claim
	node  *corev1.Node
	patch Patch
}

// initializeOne labels one Node initialized and moves its claim (see initialize); it runs on a worker.
func (p *passState) initializeOne(ctx context.Context, in toInitialize) {
	c, node := in.claim, in.node
	subject := "nodeclaim/" + c.Name
	if err := p.apply(ctx, node, in.patch); err != nil {
		p.fail(subject, err)
		return
	}
	ok, err := p.moveListed(ctx, c, state.Registered, func(cur *state.Claim) { cur.Lifecycle = state.Initialized })
	if err != nil || !ok {
		if err != nil {
			p.fail(subject, err)
		}
		return
	}
	p.locked(func() {
		p.lifecycle[c.Name] = state.Initialized
		p.rep.Initialized++
	})
	p.checkShape(ctx, c, node)
	p.decide(ctx, subject, "Initialized", "Initialized",
		fmt.Sprintf("Node %s is Ready with its startup taints gone and its resources registered", node.Name),
		map[string]string{"node": node.Name, "instanceId": c.InstanceID})
}

// apply writes a patch to the Node: taints first, then annotations, then labels
// (karpenter.sh/registered among them), and the unregistered taint last, so a pass that stops half-way
// leaves a Node the next pass finishes rather than one that takes pods before its taints are set.
func (p *passState) apply(ctx context.Context, node *corev1.Node, patch Patch) error {
	for _, t := range patch.AddTaints {
		if err := p.r.deps.NodeActions.Taint(ctx, node.Name, t); err != nil {
			return err
		}
	}
	if len(patch.SetAnnotations) > 0 {
		if err := p.r.deps.NodeActions.Annotate(ctx, node.Name, patch.SetAnnotations); err != nil {
			return err
		}
	}
	if len(patch.SetLabels) > 0 {
		labels := map[string]*string{}
		for k, v := range patch.SetLabels {
			labels[k] = &v
		}
		if err := p.r.deps.NodeActions.Label(ctx, node.Name, labels); err != nil {
			return err
		}
	}
	for _, key := range patch.RemoveTaints {
		for _, t := range node.Spec.Taints {
			if t.Key != key {
				continue
			}
			if err := p.r.deps.NodeActions.Untaint(ctx, node.Name, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// wait notes why a claim's Node is not there yet.
func (p *passState) wait(claim, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rep.Waiting == nil {
		p.rep.Waiting = map[string]string{}
	}
	p.rep.Waiting[claim] = reason
}
