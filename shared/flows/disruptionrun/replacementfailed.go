package disruptionrun

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// KindReplacementFailed records a forceful command whose replacement failed: its nodes are drained
// anyway.
const KindReplacementFailed = "DisruptionReplacementFailed"

// replacementFailed ends the wait of a command whose replacement (name) failed to launch, was removed or
// did not initialize in time. The failure is recorded on the command, for the back-off of replacements
// in its NodePool and image. A graceful command (consolidation, drift) is rolled back. A forceful one
// (expiry, an operator's request, node repair) is not: as in Karpenter v1, an expired node is removed whatever
// happens to its replacement, so its nodes are handed to the termination flow now (whose own bounded
// replacement wait and terminationGracePeriod apply) and their pods go pending for the provisioner. A
// replacement still coming up is left to the lifecycle, which times it out if it never registers.
// claims, when set, are the claim records read by the caller.
func (r *Runner) replacementFailed(ctx context.Context, c *state.DisruptionCommand, name, why string, claims map[string]state.Claim,
	rep *Report) {
	failure := &state.ReplacementFailure{NodePool: r.replacementPool(c, name, claims), At: r.deps.Now().UTC()}
	if cl, ok := claims[name]; ok {
		failure.ImageID = cl.ImageID
	}
	c.ReplacementFailure = failure
	if !forceful(disruption.Reason(c.Reason)) {
		r.rollback(ctx, c, why, claims, rep)
		return
	}
	now := r.deps.Now()
	msg := fmt.Sprintf("%s; the nodes are %s, so they are drained without waiting for it", why, forcefulWhat(c.Reason))
	r.record(ctx, commandDecisions(c.ID+"-replacement-failed", KindReplacementFailed, commandOf(*c), msg, c.Replacements, now), rep)
	for _, d := range c.Candidates {
		r.publishOnNodeAndClaim(ctx, d.Node, d.Claim, kube.Event{Type: corev1.EventTypeWarning, Reason: kube.ReasonDisruptionBlocked,
			Message: "replacement failed: " + msg}, rep)
	}
	rep.Advanced = append(rep.Advanced, fmt.Sprintf("%s: replacement failed (%s); draining anyway", c.ID, why))
	r.handOver(ctx, c, rep)
}

// replacementPool is the NodePool of replacement name: its claim's, else that of the command's first
// candidate (a claim never written).
func (r *Runner) replacementPool(c *state.DisruptionCommand, name string, claims map[string]state.Claim) string {
	if cl, ok := claims[name]; ok && cl.NodePool != "" {
		return cl.NodePool
	}
	if len(c.Candidates) > 0 {
		return c.Candidates[0].NodePool
	}
	return ""
}

func forcefulWhat(reason string) string {
	switch reason {
	case string(disruption.ReasonManual):
		return "asked to be disrupted by an operator"
	case string(disruption.ReasonUnhealthy):
		return "unhealthy (node repair does not wait on a replacement that cannot come)"
	}
	return "expired (expiry is a hard lifetime)"
}

// noCapacity publishes InsufficientCapacityError on a replacement claim whose launch found no capacity in
// any offering it allows, as Karpenter's launch does for every NodeClaim, replacements included (a
// provisioning run does the same for its own claims). Other launch failures say nothing here: the
// rollback's Events on the nodes say why.
func (r *Runner) noCapacity(ctx context.Context, claim string, err error, rep *Report) {
	var f *provisioning.LaunchFailure
	if !errors.As(err, &f) || f.Reason != provisioning.NoCapacity {
		return
	}
	r.publish(ctx, kube.Event{Object: mirror.NodeClaimObject(claim, ""), Type: corev1.EventTypeWarning, Reason: kube.ReasonInsufficientCapacityError,
		Message: fmt.Sprintf("replacement NodeClaim %s of NodePool %s found no capacity in any offering it allows: %v", claim, f.NodePool, err)}, rep)
}
