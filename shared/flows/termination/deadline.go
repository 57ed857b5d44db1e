package termination

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// deadline is when every pod must be off the claim's Node: the earliest of the request's own deadline (a
// spot interruption's notice), the claim's GoneBy (a notice that came while the drain was already under
// way, for whatever reason) and the claim's terminationGracePeriod (see grace) counted from when the
// claim started draining. Nil when none applies. A node drained for node repair (reason Unhealthy) has
// its deadline when it started draining, as Karpenter's repair stamps the termination time at once: its
// pods are deleted whatever PDBs and do-not-disrupt say (the disruption run launched their replacement
// capacity before it handed the node over).
func (s *Service) deadline(ctx context.Context, claim state.Claim, req Request) (*time.Time, error) {
	if claim.DisruptionReason == string(disruption.ReasonUnhealthy) {
		none := time.Duration(0)
		return earliestDeadline(req.Deadline, claim.GoneBy, claim.DrainingAt, &none), nil
	}
	grace, err := s.grace(ctx, claim)
	if err != nil {
		return nil, err
	}
	return earliestDeadline(req.Deadline, claim.GoneBy, claim.DrainingAt, grace), nil
}

// grace is the terminationGracePeriod that bounds the claim's drain: the one stamped on the claim at
// launch, as Karpenter reads the NodeClaim's (a later NodePool edit does not change running claims), or,
// for a claim launched before it was stamped, its NodePool's current one.
func (s *Service) grace(ctx context.Context, claim state.Claim) (*time.Duration, error) {
	if claim.TerminationGracePeriod != nil {
		d := *claim.TerminationGracePeriod
		return &d, nil
	}
	return s.poolGrace(ctx, claim.NodePool)
}

// earliestDeadline combines a request's deadline, the claim's GoneBy and the grace period counted from
// drainingAt.
func earliestDeadline(requested, goneBy, drainingAt *time.Time, grace *time.Duration) *time.Time {
	d := requested
	if goneBy != nil && (d == nil || goneBy.Before(*d)) {
		d = goneBy
	}
	if grace != nil && drainingAt != nil {
		byGrace := drainingAt.Add(*grace)
		if d == nil || byGrace.Before(*d) {
			d = &byGrace
		}
	}
	return d
}

// poolGrace reads the NodePool's spec.template.spec.terminationGracePeriod; nil when the NodePool has
// none or is gone. A stored NodePool that does not decode is an error naming it: it was validated when
// stored, so something is badly wrong.
func (s *Service) poolGrace(ctx context.Context, pool string) (*time.Duration, error) {
	if pool == "" {
		return nil, nil
	}
	item, err := s.deps.Store.GetConfig(ctx, state.KindNodePool, pool)
	if state.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading NodePool %s: %w", pool, err)
	}
	return terminationGracePeriod(item)
}

// terminationGracePeriod decodes a stored NodePool's terminationGracePeriod.
func terminationGracePeriod(item state.ConfigItem) (*time.Duration, error) {
	var np apis.NodePool
	if err := json.Unmarshal([]byte(item.Spec), &np); err != nil {
		return nil, fmt.Errorf("NodePool %s: decoding stored spec: %w", item.Name, err)
	}
	tgp := np.Spec.Template.Spec.TerminationGracePeriod
	if tgp == nil || *tgp == "" {
		return nil, nil
	}
	d, err := tgp.Parse()
	if err != nil {
		return nil, fmt.Errorf("NodePool %s: spec.template.spec.terminationGracePeriod %q: %w", item.Name, *tgp, err)
	}
	return &d, nil
}
