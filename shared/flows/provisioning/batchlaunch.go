package provisioning

import (
	"context"
	"errors"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/instance"
)

// BatchLauncher starts several identical claims' instances with one CreateFleet; *instance.Launcher
// satisfies it. A run whose launcher does not launches every claim alone.
type BatchLauncher interface {
	LaunchBatch(ctx context.Context, req instance.BatchRequest) (instance.BatchResult, error)
}

var _ BatchLauncher = (*instance.Launcher)(nil)

// BatchOutcome is what a batched launch did.
type BatchOutcome struct {
	Assigned []instance.Assignment
	Attempts int
	// Rest are the claims that got no instance, in order, and Err why (nil when Rest is empty): a
	// definite answer (ErrNoCapacity, ErrOfferingsRejected, a LaunchError) or an unknown outcome.
	Rest []string
	Err  error
	// Unavailable and Rejected are the offerings found without capacity or refused on the way (recorded).
	Unavailable []instance.Offering
	Rejected    []instance.RejectedOffering
	// ExhaustedSubnets are the subnets found without a free address on the way (recorded; the launch
	// moved to the zone's next subnet).
	ExhaustedSubnets []instance.ExhaustedSubnet
	// TagErrors are the claim tags that could not be put on launched instances.
	TagErrors []error
}

// LaunchBatchPlan launches the plan for claims (a batch id this run drew) with one CreateFleet per attempt, falling back as Launch
// does (capacity types in precedence, then the offerings left after each answer) for the claims still
// without an instance: an attempt that launches fewer than asked leaves the rest to the next. The first
// attempt's token is batch, each later one's attemptToken(batch, n), and MaxLaunchAttempts bounds them.
func LaunchBatchPlan(ctx context.Context, l BatchLauncher, rec UnavailableRecorder, plan LaunchPlan, batch string,
	claims []string) BatchOutcome {
	out := BatchOutcome{Rest: claims}
	moves := subnetMoves{}
	for _, step := range launchSteps(plan) {
		remaining := moves.apply(step.overrides)
		for len(remaining) > 0 && len(out.Rest) > 0 {
			if out.Attempts == MaxLaunchAttempts {
				out.Err = fmt.Errorf("launching batch %s: gave up after %d attempts: %w%s", batch, out.Attempts, ErrNoCapacity,
					fullSubnets(out.ExhaustedSubnets))
				return out
			}
			// Every token here is new: the batch id was drawn by this run, and an attempt whose outcome is
			// unknown ends the launch (the lifecycle adopts by the batch tag), so no look-up is needed.
			req := instance.BatchRequest{Request: plan.Request, Batch: batch, Claims: out.Rest}
			req.Fresh = true
			req.CapacityType, req.Overrides = step.capacityType, truncate(remaining)
			if out.Attempts > 0 {
				req.ClientToken = attemptToken(batch, out.Attempts)
			}
			out.Attempts++
			res, err := l.LaunchBatch(ctx, req)
			if err == nil {
				out.Assigned = append(out.Assigned, res.Assigned...)
				out.TagErrors = append(out.TagErrors, res.TagErrors...)
				out.Rest = res.Unassigned
				if err = res.Partial; err == nil {
					continue
				}
			}
			failed, full, stop, rerr := out.recordFailure(ctx, rec, err)
			if stop {
				out.Err = errors.Join(err, rerr)
				return out
			}
			remaining = moves.after(plan.subnets, remaining, failed, full, req.Overrides)
		}
	}
	if len(out.Rest) == 0 {
		return out
	}
	if len(out.Rejected) > 0 {
		out.Err = fmt.Errorf("launching batch %s: %w: %s%s", batch, ErrOfferingsRejected, rejections(out.Rejected), fullSubnets(out.ExhaustedSubnets))
	} else {
		out.Err = fmt.Errorf("launching batch %s: %w%s", batch, ErrNoCapacity, fullSubnets(out.ExhaustedSubnets))
	}
	return out
}

// recordFailure records the offerings and full subnets an attempt's error names as unavailable and
// returns them; stop says the error is not about offerings (or recording failed) and no attempt should
// follow.
func (out *BatchOutcome) recordFailure(ctx context.Context, rec UnavailableRecorder, err error) ([]instance.Offering,
	[]instance.ExhaustedSubnet, bool, error) {
	var oe *instance.OfferingsError
	if errors.As(err, &oe) {
		var failed []instance.Offering
		var full []instance.ExhaustedSubnet
		if oe.NoCapacity != nil {
			if rerr := record(ctx, rec, oe.NoCapacity); rerr != nil {
				return nil, nil, true, rerr
			}
			out.Unavailable = append(out.Unavailable, oe.NoCapacity.Offerings...)
			full = oe.NoCapacity.Subnets
		}
		if rerr := recordRejected(ctx, rec, oe.Rejected); rerr != nil {
			return nil, nil, true, rerr
		}
		out.Rejected = append(out.Rejected, oe.Rejected...)
		out.ExhaustedSubnets = append(out.ExhaustedSubnets, full...)
		failed = append(failed, oe.Offerings()...)
		return failed, full, false, nil
	}
	var ice *instance.InsufficientCapacityError
	if !errors.As(err, &ice) {
		return nil, nil, true, nil
	}
	if rerr := record(ctx, rec, ice); rerr != nil {
		return nil, nil, true, rerr
	}
	out.Unavailable = append(out.Unavailable, ice.Offerings...)
	out.ExhaustedSubnets = append(out.ExhaustedSubnets, ice.Subnets...)
	return ice.Offerings, ice.Subnets, false, nil
}
