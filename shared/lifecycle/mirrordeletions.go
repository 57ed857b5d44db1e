package lifecycle

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/mirror"
	"github.com/nodewright/nodewright/shared/state"
)

// Deleting a NodeClaim mirror is a disruption request (DESIGN decision 14), as `kubectl delete nodeclaim`
// is in Karpenter:
//
//   - The mirror carries mirror.Finalizer, so a user's DELETE leaves it Terminating. The writer learns that
//     from the metadata it lists and watches already (mirror.Writer.Deleting): no read of its own.
//   - On a sweep (which reads every live claim), each deleted mirror whose claim is in service with no
//     disruption request yet gets one (state.DisruptionRequest, By state.MirrorDeletionRequester, dated by the
//     deletionTimestamp), exactly what `nodewright disrupt` writes: the disruption run launches replacement
//     capacity for its pods first, then hands the node to the termination flow, which drains it (pods with
//     karpenter.sh/do-not-disrupt and blocking PodDisruptionBudgets hold the drain until the claim's
//     terminationGracePeriod, as in Karpenter), terminates the instance and deletes the Node. The
//     lifecycle itself removes nothing.
//   - A claim already asked to be disrupted, or already draining or terminating, needs nothing more: the
//     mirror stays Terminating and its Drained and DisruptionReason conditions say where it is.
//   - Once the claim is gone, the sweep's Sync removes the finalizer and the mirror goes.
//
// At most maxDeletionRequests requests are written a pass (one conditional claim update each); the rest
// wait for the next sweep.

// maxDeletionRequests bounds the claim writes one pass makes for deleted mirrors.
const maxDeletionRequests = 100

// KindMirrorDeleted is the decision kind recorded when a deleted mirror becomes a disruption request.
const KindMirrorDeleted = "MirrorDeleted"

// ReasonMirrorDeleted is the Event reason (on the NodeClaim mirror) and decision reason of that request.
const ReasonMirrorDeleted kube.Reason = "DisruptionRequested"

// errDeletionNotDue abandons a request: the claim left service or got a request since the pass read it.
var errDeletionNotDue = errors.New("claim no longer in service or already asked to be disrupted")

// MirrorDeletions lists the NodeClaim mirrors someone deleted that the finalizer holds; *mirror.Writer
// satisfies it.
type MirrorDeletions interface {
	Deleting() []mirror.Deletion
}

var _ MirrorDeletions = (*mirror.Writer)(nil)

// requestMirroredDeletions turns the deleted mirrors of claims in service into disruption requests. It runs
// on a sweep only, after the mirrors' Sync: the sweep read every live claim, and the Sync's watch brought
// the deletions up to date.
func (p *passState) requestMirroredDeletions(ctx context.Context) {
	src, ok := p.r.deps.Mirrors.(MirrorDeletions)
	if !ok {
		return
	}
	deleting := src.Deleting()
	if len(deleting) == 0 {
		return
	}
	byName := make(map[string]state.Claim, len(p.w.claims))
	for _, c := range p.w.claims {
		byName[c.Name] = c
	}
	written := 0
	for _, d := range deleting {
		c, ok := byName[d.Name]
		if !ok || !p.lifecycle[c.Name].InService() || c.DisruptionRequest != nil || p.sent[c.Name] {
			continue // gone (the Sync releases its mirror), on its way out, or already asked
		}
		if written == maxDeletionRequests {
			p.fail("nodeclaim mirrors", fmt.Errorf("%d more deleted mirrors wait for the next sweep (at most %d requests a pass)",
				len(deleting)-written, maxDeletionRequests))
			return
		}
		written++
		p.requestDeletion(ctx, c, d)
	}
}

// requestDeletion writes claim c's disruption request for its deleted mirror d, conditioned on the claim
// being in service with no request yet, and records it (a decision, an Event on the mirror).
func (p *passState) requestDeletion(ctx context.Context, c state.Claim, d mirror.Deletion) {
	subject := "nodeclaim/" + c.Name
	req := state.DisruptionRequest{Reason: "its NodeClaim mirror was deleted", RequestedAt: d.Since.UTC(), By: state.MirrorDeletionRequester}
	_, err := p.r.deps.Store.UpdateClaim(ctx, c.Name, func(cur *state.Claim) error {
		if !cur.Lifecycle.InService() || cur.DisruptionRequest != nil {
			return errDeletionNotDue
		}
		cur.DisruptionRequest = &req
		return nil
	})
	if errors.Is(err, errDeletionNotDue) {
		return
	}
	if err != nil {
		p.fail(subject, fmt.Errorf("requesting the disruption of its deleted mirror: %w", err))
		return
	}
	p.rep.DeletionsRequested = append(p.rep.DeletionsRequested, c.Name)
	msg := "the NodeClaim mirror was deleted: disruption requested; the disruption run launches replacement capacity for its pods first, " +
		"then the node is drained and terminated, and the mirror goes with the claim"
	if c.NodeName == "" {
		msg = "the NodeClaim mirror was deleted: disruption requested; the claim has no Node yet, so it is terminated at once, " +
			"and the mirror goes with the claim"
	}
	p.decide(ctx, subject, KindMirrorDeleted, string(ReasonMirrorDeleted), msg,
		map[string]string{"nodePool": c.NodePool, "node": c.NodeName, "requestedAt": req.RequestedAt.Format("2006-01-02T15:04:05Z"), "by": req.By})
	if p.r.deps.Events == nil {
		return
	}
	if _, err := p.r.deps.Events.Publish(ctx, kube.Event{Object: mirror.NodeClaimObject(c.Name, d.UID), Type: corev1.EventTypeNormal,
		Reason: ReasonMirrorDeleted, Message: msg}); err != nil {
		p.fail(subject, err)
	}
}
