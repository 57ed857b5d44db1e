package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/reconcile"
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
// them (deleted records only keep their names taken). The instances are Nodewright's own (the list filters
// on nodewright.sh/cluster); every Node with an EC2 providerID is passed, since a Node only matters to the
// decision as the Node of an own instance or claim: a Node of Karpenter's matches neither and is never
// touched.
func (p *passState) reconcileInput() reconcile.Input {
	in := reconcile.Input{Now: p.r.deps.Now(), ClaimsComplete: true, InstancesComplete: true, NodesComplete: true}
	for _, c := range p.w.claims {
		st, live := reconcileState[p.lifecycle[c.Name]]
		if !live {
			st = reconcile.Deleted
		}
		rc := reconcile.Claim{Name: c.Name, State: st, InstanceID: c.InstanceID, NodeName: c.NodeName,
			CreatedAt: c.CreatedAt, LaunchedAt: c.CreatedAt, Batch: c.Batch}
		if c.LaunchedAt != nil {
			rc.LaunchedAt = *c.LaunchedAt
		}
		if c.NodeLostAt != nil {
			rc.NodeLostAt = *c.NodeLostAt
		}
		in.Claims = append(in.Claims, rc)
	}
	for _, i := range p.w.instances {
		in.Instances = append(in.Instances, reconcile.Instance{ID: i.ID, Claim: i.Tags[instance.TagNodeClaim], LaunchTime: i.LaunchTime,
			Batch: i.Tags[instance.TagBatch]})
	}
	for _, n := range p.w.nodes {
		if id := instanceID(n.Spec.ProviderID); id != "" {
			in.Nodes = append(in.Nodes, reconcile.Node{Name: n.Name, InstanceID: id, Ready: ready(n)})
		}
	}
	return in
}

// addDeletedNames adds to in the deleted claims that instances no listed claim stands for are tagged
// with: the live claim list holds no deleted claims, and reconciliation needs their names taken (an
// orphan is rebuilt under another name than a deleted claim's). Each is read by key, only for such
// instances (rare: an instance of a deleted claim is normally gone). A read that fails leaves the claims
// incomplete, so nothing is decided on them.
func (p *passState) addDeletedNames(ctx context.Context, in *reconcile.Input) {
	listed := map[string]bool{}
	for _, c := range in.Claims {
		listed[c.Name] = true
	}
	for _, i := range in.Instances {
		if i.Claim == "" || listed[i.Claim] {
			continue
		}
		listed[i.Claim] = true
		c, err := p.r.deps.Store.GetClaim(ctx, i.Claim)
		if state.IsNotFound(err) {
			continue
		}
		if err != nil {
			in.ClaimsComplete = false
			p.fail("instances", fmt.Errorf("reading the claim %s instance %s is tagged with: %w", i.Claim, i.ID, err))
			return
		}
		if c.Lifecycle == state.Deleted {
			in.Claims = append(in.Claims, reconcile.Claim{Name: c.Name, State: reconcile.Deleted, InstanceID: c.InstanceID,
				NodeName: c.NodeName, CreatedAt: c.CreatedAt, LaunchedAt: c.CreatedAt, Batch: c.Batch})
		}
	}
}

// repair decides with reconcile.Decide and carries out each action in the order given. It terminates no
// instance and deletes no Node (DESIGN decision 10): nodes that must go are handed to the termination
// flow. An action that rests on an instance being gone is carried out only once EC2, asked by id,
// confirms it (the list may have been read before a launch, or lag behind it).
func (p *passState) repair(ctx context.Context) {
	in := p.reconcileInput()
	p.addDeletedNames(ctx, &in)
	res := reconcile.Decide(in)
	if res.Skipped != "" {
		p.rep.Skipped = res.Skipped
		return
	}
	instances := map[string]instance.Instance{}
	for _, i := range p.w.instances {
		instances[i.ID] = i
	}
	alive, confirmed := p.confirmGone(ctx, res.Actions)
	if confirmed {
		p.recordDiedAtLaunch(ctx, res.Actions, alive)
	}
	for _, a := range res.Actions {
		if a.ConfirmGone && (!confirmed || alive[a.Instance]) {
			if confirmed {
				p.wait(subjectOf(a), "InstanceStillRunning: "+a.Instance+" is not listed yet but EC2 says it runs; nothing is collected")
			}
			continue
		}
		switch a.Kind {
		case reconcile.AdoptInstance:
			p.adopt(ctx, a, instances[a.Instance])
		case reconcile.RebuildClaim:
			p.rebuild(ctx, a, instances[a.Instance])
		case reconcile.Terminate:
			p.handOverAction(ctx, a)
		case reconcile.DeleteClaim:
			p.deleteClaim(ctx, a)
		case reconcile.NoteNodeLost:
			p.noteNodeLost(ctx, a)
		case reconcile.ClearNodeLost:
			p.clearNodeLost(ctx, a)
		}
	}
}

// confirmGone asks EC2, by id, which instances the actions that rest on a missing instance name are still
// live; confirmed is false when it could not be asked (those actions then wait for the next pass).
func (p *passState) confirmGone(ctx context.Context, actions []reconcile.Action) (alive map[string]bool, confirmed bool) {
	var ids []string
	for _, a := range actions {
		if a.ConfirmGone && a.Instance != "" {
			ids = append(ids, a.Instance)
		}
	}
	alive = map[string]bool{}
	if len(ids) == 0 {
		return alive, true
	}
	live, err := p.r.deps.Instances.LiveByID(ctx, ids)
	if err != nil {
		p.fail("instances", fmt.Errorf("confirming that instances are gone: %w", err))
		return alive, false
	}
	for _, i := range live {
		alive[i.ID] = true
	}
	return alive, true
}

// handOverAction sends the action's claim to the termination flow, which drains its Node (if any),
// terminates the instance and deletes the Node once the instance is gone; at most once per overlap of
// passes, as every hand-over of the lifecycle.
func (p *passState) handOverAction(ctx context.Context, a reconcile.Action) {
	c := state.Claim{Name: a.Claim} // a claim rebuilt this pass is not in the pass's list
	for _, listed := range p.w.claims {
		if listed.Name == a.Claim {
			c = listed
		}
	}
	if !handOverDue(c, p.r.deps.Now()) {
		return // handed over lately (this rule or another); the stalled-drain rule sends again if it is lost
	}
	details := map[string]string{"instanceId": a.Instance}
	if a.Node != "" {
		details["node"] = a.Node
	}
	p.handOver(ctx, c, reasonOf(a), reasonOf(a), a.Reason+"; handed to the termination flow", details)
}

// adopt gives a pending claim the instance its interrupted launch left behind.
func (p *passState) adopt(ctx context.Context, a reconcile.Action, inst instance.Instance) {
	subject := "nodeclaim/" + a.Claim
	ok, err := p.move(ctx, a.Claim, state.Pending, func(c *state.Claim) {
		c.Lifecycle, c.InstanceID, c.InstanceType, c.Zone = state.Launched, inst.ID, inst.InstanceType, inst.Zone
		c.CapacityType, c.ProviderID = inst.CapacityType, inst.ProviderID()
		recordLaunchFacts(c, inst)
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

// reasonOf is the short reason of an action ("registration_timeout", "garbage_collected", "orphan").
func reasonOf(a reconcile.Action) string {
	r, _, _ := strings.Cut(a.Reason, ":")
	return r
}
