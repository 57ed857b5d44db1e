package lifecycle

import (
	"context"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/reconcile"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// GoneReasons tells why gone instances went: the state reason code (and message) EC2 gives for each of
// ids it describes as shutting down or terminated; *instance.Launcher satisfies it.
type GoneReasons interface {
	GoneReasons(ctx context.Context, ids []string) (codes, messages map[string]string, err error)
}

// LaunchFailures keeps what a failed launch teaches: its offering out of the solves for a while, and the
// failure counted against the claim's EC2NodeClass, whose launches back off (state.ClassBackoff);
// *state.Store satisfies it.
type LaunchFailures interface {
	provisioning.UnavailableRecorder
	RecordLaunchFailure(ctx context.Context, nodeClass string, f state.LaunchFailure) (bool, error)
}

var (
	_ GoneReasons    = (*instance.Launcher)(nil)
	_ LaunchFailures = (*state.Store)(nil)
)

// recordDiedAtLaunch looks, among the launched claims about to be forgotten because EC2 confirmed their
// instance gone (actions, alive as confirmGone left them), for those whose instance never registered and
// was terminated by EC2 while it started (instance.DiedAtLaunch): a failed launch, not a node that went
// away. Each one's offering is kept out of the solves for state.DiedAtLaunchTTL and a LaunchFailed decision
// (reason InstanceDiedAtLaunch) says why, and the failure is recorded against the claim's EC2NodeClass
// (once per instance, whichever detector saw it first), whose launches back off after it; the claim is
// then forgotten as any other. Without this the claim's pods launched the same offering again as soon as
// the claim was gone, and then the next offering, every few minutes.
func (p *passState) recordDiedAtLaunch(ctx context.Context, actions []reconcile.Action, alive map[string]bool) {
	if p.r.deps.GoneReasons == nil || p.r.deps.Unavailable == nil {
		return
	}
	listed := map[string]state.Claim{}
	for _, c := range p.w.claims {
		listed[c.Name] = c
	}
	byInstance := map[string]state.Claim{}
	var ids []string
	for _, a := range actions {
		c, ok := listed[a.Claim]
		if a.Kind != reconcile.DeleteClaim || !a.ConfirmGone || a.Instance == "" || alive[a.Instance] || !ok ||
			p.lifecycle[a.Claim] != state.Launched || c.InstanceID != a.Instance {
			continue
		}
		byInstance[a.Instance] = c
		ids = append(ids, a.Instance)
	}
	if len(ids) == 0 {
		return
	}
	codes, messages, err := p.r.deps.GoneReasons.GoneReasons(ctx, ids)
	if err != nil {
		p.fail("instances", fmt.Errorf("reading why gone instances went: %w", err))
		return
	}
	for _, id := range ids {
		code := codes[id]
		if !instance.DiedAtLaunch(code) {
			continue
		}
		c := byInstance[id]
		subject := "nodeclaim/" + c.Name
		o := state.Offering{InstanceType: c.InstanceType, Zone: c.Zone, CapacityType: c.CapacityType}
		if err := p.r.deps.Unavailable.MarkUnavailable(ctx, o, code, state.DiedAtLaunchTTL); err != nil {
			p.fail(subject, fmt.Errorf("keeping %s out after its instance died at launch: %w", o, err))
			continue
		}
		if c.NodeClass != "" {
			f := state.LaunchFailure{InstanceID: id, At: p.r.deps.Now(), SpecHash: c.NodeClassHash, Code: code, Message: messages[id]}
			if _, err := p.r.deps.Unavailable.RecordLaunchFailure(ctx, c.NodeClass, f); err != nil {
				p.fail(subject, fmt.Errorf("counting the launch failure against EC2NodeClass %s: %w", c.NodeClass, err))
			}
		}
		p.mu.Lock()
		p.rep.DiedAtLaunch++
		p.mu.Unlock()
		p.decide(ctx, subject, "LaunchFailed", "InstanceDiedAtLaunch",
			fmt.Sprintf("EC2 terminated instance %s while launching it (%s: %s); %s %s in %s is not launched again for %s; the failure counts toward EC2NodeClass %s's launch back-off",
				id, code, messages[id], c.CapacityType, c.InstanceType, c.Zone, state.DiedAtLaunchTTL, c.NodeClass),
			map[string]string{"instanceId": id, "stateReason": code, "instanceType": c.InstanceType, "zone": c.Zone,
				"capacityType": c.CapacityType, "nodeClass": c.NodeClass})
	}
}
