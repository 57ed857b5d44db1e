package disruptionrun

import (
	"context"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// MaxClaimEvents bounds the Events a run publishes on NodeClaim mirrors. A command disrupts a handful of
// nodes; a run that advances many commands at once (a large drift) tells the first ones' claims, and
// their Nodes still get every Event.
const MaxClaimEvents = 50

// publishOnNodeAndClaim publishes e on the Node node and on the NodeClaim mirror of claim, as Karpenter
// publishes its disruption Events (DisruptionLaunching, DisruptionWaitingReadiness,
// DisruptionTerminating, DisruptionBlocked) on both the Node and its NodeClaim. A claim without a Node
// (a static pool's) gets its claim's alone.
func (r *Runner) publishOnNodeAndClaim(ctx context.Context, node, claim string, e kube.Event, rep *Report) {
	e.Object = nodeRef(node)
	r.publish(ctx, e, rep)
	r.publishOnClaim(ctx, claim, e, rep)
}

// claimEvent is an Event for the NodeClaim mirror of claim.
type claimEvent struct {
	claim string
	event kube.Event
}

// publishKeptOnClaim publishes an Unconsolidatable Event on the claim's NodeClaim mirror, at most
// MaxClaimEvents a run, counted apart from the disruption progress Events (Report.ClaimEvents), so a
// cold start that explains every kept node never takes a command's own Events' place.
func (r *Runner) publishKeptOnClaim(ctx context.Context, ce claimEvent, rep *Report) {
	if ce.claim == "" || r.deps.Events == nil || rep.UnconsolidatableClaimEvents >= MaxClaimEvents {
		return
	}
	rep.UnconsolidatableClaimEvents++
	e := ce.event
	e.Object = mirror.NodeClaimObject(ce.claim, "")
	r.publish(ctx, e, rep)
}

// publishOnClaim publishes e on the NodeClaim mirror of claim (mirror.NodeClaimObject; the function's
// publisher, mirror.ClaimEvents, gives it the mirror's UID so `kubectl describe
// nodeclaims.nodewright.sh` shows it), best effort and at most MaxClaimEvents a run; the Recorder drops
// repeats within its window.
func (r *Runner) publishOnClaim(ctx context.Context, claim string, e kube.Event, rep *Report) {
	if claim == "" || r.deps.Events == nil || rep.ClaimEvents >= MaxClaimEvents {
		return
	}
	rep.ClaimEvents++
	e.Object = mirror.NodeClaimObject(claim, "")
	r.publish(ctx, e, rep)
}
