package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/state"
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
		p.lifecycle[name] = moved.to
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("updating claim: %w", err)
	}
	return true, nil
}

// register brings each launched claim's Node, once it has joined, the claim's labels and the NodePool's
// annotations and taints, lifts karpenter.sh/unregistered and moves the claim to registered.
func (p *passState) register(ctx context.Context) {
	for _, c := range p.w.claims {
		if c.Lifecycle != state.Launched {
			continue
		}
		subject := "nodeclaim/" + c.Name
		reg := Register(ExpectedFor(c, p.w.pools[c.NodePool]), p.w.nodes)
		if reg.Node == nil {
			p.wait(c.Name, reg.Reason)
			continue
		}
		node := reg.Node
		for _, w := range reg.Warnings {
			reason, msg, _ := strings.Cut(w, ": ")
			p.event(ctx, node, corev1.EventTypeWarning, kube.Reason(reason), msg)
		}
		if err := p.apply(ctx, node, reg.Patch); err != nil {
			p.fail(subject, err)
			continue
		}
		ok, err := p.move(ctx, c.Name, state.Launched, func(cur *state.Claim) {
			cur.Lifecycle, cur.NodeName = state.Registered, node.Name
			if cur.ProviderID == "" {
				cur.ProviderID = node.Spec.ProviderID
			}
		})
		if err != nil || !ok {
			if err != nil {
				p.fail(subject, err)
			}
			continue
		}
		p.lifecycle[c.Name] = state.Registered
		p.rep.Registered++
		msg := fmt.Sprintf("Node %s registered for NodeClaim %s (instance %s)", node.Name, c.Name, c.InstanceID)
		p.event(ctx, node, corev1.EventTypeNormal, ReasonRegistered, msg)
		p.decide(ctx, subject, "Registered", "Registered", msg, map[string]string{"node": node.Name,
			"instanceId": c.InstanceID, "warnings": strings.Join(reg.Warnings, "; ")})
	}
}

// initialize labels each registered claim's Node initialized once it is Ready, its startup and ephemeral
// taints are gone and its extended resources are there, and moves the claim to initialized. Only claims
// registered when the pass read them are looked at: the Node list predates this pass's own patches.
func (p *passState) initialize(ctx context.Context) {
	for _, c := range p.w.claims {
		if c.Lifecycle != state.Registered {
			continue
		}
		subject := "nodeclaim/" + c.Name
		exp := ExpectedFor(c, p.w.pools[c.NodePool])
		node := p.w.nodeByName(c.NodeName)
		if node == nil || node.Spec.ProviderID != exp.ProviderID {
			node = Register(exp, p.w.nodes).Node
		}
		if node == nil {
			p.wait(c.Name, "NodeNotFound")
			continue
		}
		init := Initialize(exp, node)
		if !init.Initialized {
			p.wait(c.Name, init.Reason)
			continue
		}
		if err := p.apply(ctx, node, init.Patch); err != nil {
			p.fail(subject, err)
			continue
		}
		ok, err := p.move(ctx, c.Name, state.Registered, func(cur *state.Claim) { cur.Lifecycle = state.Initialized })
		if err != nil || !ok {
			if err != nil {
				p.fail(subject, err)
			}
			continue
		}
		p.lifecycle[c.Name] = state.Initialized
		p.rep.Initialized++
		p.decide(ctx, subject, "Initialized", "Initialized",
			fmt.Sprintf("Node %s is Ready with its startup taints gone and its resources registered", node.Name),
			map[string]string{"node": node.Name, "instanceId": c.InstanceID})
	}
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
	if p.rep.Waiting == nil {
		p.rep.Waiting = map[string]string{}
	}
	p.rep.Waiting[claim] = reason
}
