package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
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

// DeletionStore is the part of the state table RequestMirrorDeletions writes; *state.Store satisfies it.
type DeletionStore interface {
	UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error)
	RecordDecision(ctx context.Context, d state.Decision) error
}

var _ DeletionStore = (*state.Store)(nil)

// MirrorDeletionReport is what RequestMirrorDeletions did.
type MirrorDeletionReport struct {
	// Requested names the claims given a disruption request.
	Requested []string
	// Errors are problems with single claims ("nodeclaim/<name>: ..."), and the deletions left for the next
	// sweep; they are tried again then.
	Errors []string
}

// RequestMirrorDeletions turns the deleted mirrors (deleting) of claims in service into disruption
// requests. claims must be every live claim, each in the lifecycle its caller leaves it in (a claim
// missing from them is gone: the writer releases its mirror); events may be nil. At most
// maxDeletionRequests claims are written; the rest are reported and wait for the next call.
func RequestMirrorDeletions(ctx context.Context, store DeletionStore, events EventPublisher, deleting []mirror.Deletion,
	claims []state.Claim, now time.Time) MirrorDeletionReport {
	var rep MirrorDeletionReport
	if len(deleting) == 0 {
		return rep
	}
	byName := make(map[string]state.Claim, len(claims))
	for _, c := range claims {
		byName[c.Name] = c
	}
	written := 0
	for _, d := range deleting {
		c, ok := byName[d.Name]
		if !ok || !c.Lifecycle.InService() || c.DisruptionRequest != nil {
			continue // gone (the Sync releases its mirror), on its way out, or already asked
		}
		if written == maxDeletionRequests {
			rep.Errors = append(rep.Errors, fmt.Sprintf("nodeclaim mirrors: %d more deleted mirrors wait for the next sweep (at most %d requests a pass)",
				len(deleting)-written, maxDeletionRequests))
			break
		}
		written++
		asked, err := requestDeletion(ctx, store, events, c, d, now)
		if asked {
			rep.Requested = append(rep.Requested, c.Name)
		}
		if err != nil {
			rep.Errors = append(rep.Errors, "nodeclaim/"+c.Name+": "+err.Error())
		}
	}
	return rep
}

// requestMirroredDeletions is RequestMirrorDeletions over the pass's claims, as the pass leaves them. It
// runs on a sweep only, after the mirrors' Sync: the sweep read every live claim, and the Sync's watch
// brought the deletions up to date.
func (p *passState) requestMirroredDeletions(ctx context.Context) {
	src, ok := p.r.deps.Mirrors.(MirrorDeletions)
	if !ok {
		return
	}
	claims := make([]state.Claim, 0, len(p.w.claims))
	for _, c := range p.w.claims {
		if p.sent[c.Name] {
			continue // handed to the termination flow by this pass: on its way out
		}
		c.Lifecycle = p.lifecycle[c.Name]
		claims = append(claims, c)
	}
	var events EventPublisher
	if p.r.deps.Events != nil {
		events = p.r.deps.Events
	}
	rep := RequestMirrorDeletions(ctx, p.r.deps.Store, events, src.Deleting(), claims, p.r.deps.Now())
	p.rep.DeletionsRequested = append(p.rep.DeletionsRequested, rep.Requested...)
	p.rep.Errors = append(p.rep.Errors, rep.Errors...)
}

// requestDeletion writes claim c's disruption request for its deleted mirror d, conditioned on the claim
// being in service with no request yet, and records it (a decision, an Event on the mirror). asked says
// the request was written; a claim that left service or got a request meanwhile is left as it is.
func requestDeletion(ctx context.Context, store DeletionStore, events EventPublisher, c state.Claim, d mirror.Deletion, now time.Time) (asked bool, _ error) {
	req := state.DisruptionRequest{Reason: "its NodeClaim mirror was deleted", RequestedAt: d.Since.UTC(), By: state.MirrorDeletionRequester}
	_, err := store.UpdateClaim(ctx, c.Name, func(cur *state.Claim) error {
		if !cur.Lifecycle.InService() || cur.DisruptionRequest != nil {
			return errDeletionNotDue
		}
		cur.DisruptionRequest = &req
		return nil
	})
	if errors.Is(err, errDeletionNotDue) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("requesting the disruption of its deleted mirror: %w", err)
	}
	msg := "the NodeClaim mirror was deleted: disruption requested; the disruption run launches replacement capacity for its pods first, " +
		"then the node is drained and terminated, and the mirror goes with the claim"
	if c.NodeName == "" {
		msg = "the NodeClaim mirror was deleted: disruption requested; the claim has no Node yet, so it is terminated at once, " +
			"and the mirror goes with the claim"
	}
	var problems []error
	if err := store.RecordDecision(ctx, state.Decision{Subject: "nodeclaim/" + c.Name, ID: "mirror-deleted-" + strconv.FormatInt(now.UnixMilli(), 10),
		Kind: KindMirrorDeleted, Reason: string(ReasonMirrorDeleted), Message: msg, At: now.UTC(),
		Details: map[string]string{"nodePool": c.NodePool, "node": c.NodeName, "requestedAt": req.RequestedAt.Format(time.RFC3339), "by": req.By}}); err != nil {
		problems = append(problems, fmt.Errorf("recording the %s decision: %w", KindMirrorDeleted, err))
	}
	if events != nil {
		if _, err := events.Publish(ctx, kube.Event{Object: mirror.NodeClaimObject(c.Name, d.UID), Type: corev1.EventTypeNormal,
			Reason: ReasonMirrorDeleted, Message: msg}); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return true, fmt.Errorf("the request is written, but: %w", errors.Join(problems...))
	}
	return true, nil
}
