package provisioning

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// InstanceLauncher starts one claim's instance; *instance.Launcher satisfies it.
type InstanceLauncher interface {
	Launch(ctx context.Context, req instance.Request) (instance.Instance, error)
}

// UnavailableRecorder takes an offering out of consideration for every invocation; *state.Store
// satisfies it.
type UnavailableRecorder interface {
	MarkUnavailable(ctx context.Context, o state.Offering, reason string, ttl time.Duration) error
	MarkSubnetUnavailable(ctx context.Context, subnetID, zone, reason string, ttl time.Duration) error
}

var (
	_ InstanceLauncher    = (*instance.Launcher)(nil)
	_ UnavailableRecorder = (*state.Store)(nil)
)

// MaxLaunchAttempts bounds the CreateFleet calls of one launch, across capacity types.
const MaxLaunchAttempts = 6

// LaunchPlan is one claim's launch: the request (its CapacityType and Overrides are set per attempt) and
// the overrides available in each capacity type, cheapest first.
type LaunchPlan struct {
	Request instance.Request
	// Reserved are the overrides into capacity reservations, each through its reservation's template.
	Reserved []instance.Override
	Spot     []instance.Override
	OnDemand []instance.Override
	// Images names the AMI of each launch template the overrides go through (template → image id).
	Images map[string]string
	// Filtered says what the filters before the fleet call left out (see filterOfferings), one entry per
	// filter that left something out.
	Filtered []string
	// subnets are the subnets the overrides go into and the addresses reserved there (subnetchoice.go);
	// nil for a plan built without a run's subnet view.
	subnets *subnetHold
}

// LaunchResult is what a launch did.
type LaunchResult struct {
	Instance instance.Instance
	Attempts int
	// Unavailable lists the offerings found without capacity on the way (already recorded).
	Unavailable []instance.Offering
	// Rejected lists the offerings EC2 refused for other reasons on the way (dropped, and recorded like
	// those without capacity unless their launch template was missing: the next run makes it again).
	Rejected []instance.RejectedOffering
	// ExhaustedSubnets are the subnets found without a free address on the way (recorded; the launch
	// moved to the zone's next subnet).
	ExhaustedSubnets []instance.ExhaustedSubnet
}

// ErrNoCapacity means every offering of every allowed capacity type lacked capacity.
var ErrNoCapacity = errors.New("no offering had capacity")

// ErrOfferingsRejected means every offering was tried and EC2 refused at least one of them for a reason
// other than capacity (the others lacked capacity).
var ErrOfferingsRejected = errors.New("EC2 refused every offering it did not lack capacity for")

// Launch launches the plan's claim, falling back without a new solve: capacity types in precedence
// (reserved, then spot, then on-demand; see launchSteps), and within one the offerings left after each
// insufficient-capacity answer. Every offering found without capacity is recorded for
// state.UnavailableCapacityTTL so the next solve, in any invocation, avoids it. An offering EC2 refuses
// for another reason (instance.OfferingsError) is dropped and the launch goes on with the rest; it is
// recorded too, so runs do not ask for it again and again while the solve has other choices. Any
// other error stops the launch and is returned as it is (see instance.Answered and instance.KindOf).
//
// A subnet a fleet found without a free address (InsufficientFreeAddressesInSubnet) is recorded as
// unavailable for state.UnavailableCapacityTTL, not its offerings: the launch goes on with the zone's
// next subnet (plan.subnets), and drops the zone only when it has none left.
func Launch(ctx context.Context, l InstanceLauncher, rec UnavailableRecorder, plan LaunchPlan) (LaunchResult, error) {
	var res LaunchResult
	moves := subnetMoves{}
	for _, step := range launchSteps(plan) {
		remaining := moves.apply(step.overrides)
		for len(remaining) > 0 {
			if res.Attempts == MaxLaunchAttempts {
				return res, fmt.Errorf("launching claim %s: gave up after %d attempts: %w%s", plan.Request.Claim, res.Attempts, ErrNoCapacity,
					fullSubnets(res.ExhaustedSubnets))
			}
			req := plan.Request
			req.CapacityType, req.Overrides = step.capacityType, truncate(remaining)
			if res.Attempts > 0 {
				req.ClientToken = attemptToken(plan.Request.Claim, res.Attempts)
			}
			res.Attempts++
			inst, err := l.Launch(ctx, req)
			if err == nil {
				// Pools the fleet skipped for lack of capacity are as unavailable as a failed launch's, and
				// subnets it found full as marked.
				if len(inst.NoCapacity)+len(inst.ExhaustedSubnets) > 0 {
					skipped := &instance.InsufficientCapacityError{Offerings: inst.NoCapacity, Codes: []string{"InsufficientInstanceCapacity"},
						Subnets: inst.ExhaustedSubnets}
					if err := record(ctx, rec, skipped); err != nil {
						return res, err
					}
					res.Unavailable = append(res.Unavailable, inst.NoCapacity...)
					res.ExhaustedSubnets = append(res.ExhaustedSubnets, inst.ExhaustedSubnets...)
					moves.full(plan.subnets, inst.ExhaustedSubnets)
				}
				res.Instance = inst
				return res, nil
			}
			var oe *instance.OfferingsError
			if errors.As(err, &oe) {
				var subnets []instance.ExhaustedSubnet
				if oe.NoCapacity != nil {
					if err := record(ctx, rec, oe.NoCapacity); err != nil {
						return res, err
					}
					res.Unavailable = append(res.Unavailable, oe.NoCapacity.Offerings...)
					subnets = oe.NoCapacity.Subnets
				}
				if err := recordRejected(ctx, rec, oe.Rejected); err != nil {
					return res, err
				}
				res.Rejected = append(res.Rejected, oe.Rejected...)
				res.ExhaustedSubnets = append(res.ExhaustedSubnets, subnets...)
				remaining = moves.after(plan.subnets, remaining, oe.Offerings(), subnets, req.Overrides)
				continue
			}
			var ice *instance.InsufficientCapacityError
			if !errors.As(err, &ice) {
				return res, err
			}
			if err := record(ctx, rec, ice); err != nil {
				return res, err
			}
			res.Unavailable = append(res.Unavailable, ice.Offerings...)
			res.ExhaustedSubnets = append(res.ExhaustedSubnets, ice.Subnets...)
			remaining = moves.after(plan.subnets, remaining, ice.Offerings, ice.Subnets, req.Overrides)
		}
	}
	if len(res.Rejected) > 0 {
		return res, fmt.Errorf("launching claim %s: %w: %s%s", plan.Request.Claim, ErrOfferingsRejected, rejections(res.Rejected),
			fullSubnets(res.ExhaustedSubnets))
	}
	return res, fmt.Errorf("launching claim %s: %w%s", plan.Request.Claim, ErrNoCapacity, fullSubnets(res.ExhaustedSubnets))
}

// rejections says which offerings EC2 refused and why, one code at a time.
func rejections(rejected []instance.RejectedOffering) string {
	byCode := map[string][]string{}
	var codes []string
	for _, r := range rejected {
		if byCode[r.Code] == nil {
			codes = append(codes, r.Code)
		}
		byCode[r.Code] = append(byCode[r.Code], r.InstanceType+" in "+r.Zone)
	}
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%s for %s", c, strings.Join(byCode[c], ", "))
	}
	return strings.Join(parts, "; ")
}

// truncate keeps the overrides of the cheapest instance.MaxOverrideTypes instance types.
func truncate(overrides []instance.Override) []instance.Override {
	types := map[string]bool{}
	var out []instance.Override
	for _, o := range overrides {
		if !types[o.InstanceType] && len(types) == instance.MaxOverrideTypes {
			continue
		}
		types[o.InstanceType] = true
		out = append(out, o)
	}
	return out
}

// without removes the offerings that failed. An answer that names no offering takes out everything that
// was offered in that attempt, so the loop always makes progress.
func without(remaining []instance.Override, failed []instance.Offering, tried []instance.Override) []instance.Override {
	drop := map[[2]string]bool{}
	for _, f := range failed {
		drop[[2]string{f.InstanceType, f.Zone}] = true
	}
	if len(drop) == 0 {
		for _, o := range tried {
			drop[[2]string{o.InstanceType, o.Zone}] = true
		}
	}
	var out []instance.Override
	for _, o := range remaining {
		if !drop[[2]string{o.InstanceType, o.Zone}] {
			out = append(out, o)
		}
	}
	return out
}

// record marks the offerings of ice unavailable under its first capacity code, and its full subnets under
// InsufficientFreeAddressesInSubnet, each for state.UnavailableCapacityTTL (Karpenter's TTL for both).
func record(ctx context.Context, rec UnavailableRecorder, ice *instance.InsufficientCapacityError) error {
	reason := "InsufficientCapacity"
	for _, c := range ice.Codes {
		if c != instance.CodeInsufficientFreeAddresses {
			reason = c
			break
		}
	}
	for _, s := range ice.Subnets {
		if err := rec.MarkSubnetUnavailable(ctx, s.SubnetID, s.Zone, instance.CodeInsufficientFreeAddresses, state.UnavailableCapacityTTL); err != nil {
			return fmt.Errorf("recording subnet %s (%s) as full: %w", s.SubnetID, s.Zone, err)
		}
	}
	for _, o := range ice.Offerings {
		err := rec.MarkUnavailable(ctx, state.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType},
			reason, state.UnavailableCapacityTTL)
		if err != nil {
			return fmt.Errorf("recording %s/%s/%s as unavailable: %w", o.CapacityType, o.InstanceType, o.Zone, err)
		}
	}
	return nil
}

// recordRejected records refused offerings as unavailable, under their error code, except those whose
// launch template was missing.
func recordRejected(ctx context.Context, rec UnavailableRecorder, rejected []instance.RejectedOffering) error {
	for _, r := range rejected {
		if r.Kind == instance.KindLaunchTemplateNotFound {
			continue
		}
		err := rec.MarkUnavailable(ctx, state.Offering{InstanceType: r.InstanceType, Zone: r.Zone, CapacityType: r.CapacityType},
			r.Code, state.UnavailableCapacityTTL)
		if err != nil {
			return fmt.Errorf("recording %s/%s/%s as refused: %w", r.CapacityType, r.InstanceType, r.Zone, err)
		}
	}
	return nil
}
