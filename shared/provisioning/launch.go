package provisioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/instance"
	"github.com/nodewright/nodewright/shared/state"
)

// InstanceLauncher starts one claim's instance; *instance.Launcher satisfies it.
type InstanceLauncher interface {
	Launch(ctx context.Context, req instance.Request) (instance.Instance, error)
}

// UnavailableRecorder takes an offering out of consideration for every invocation; *state.Store
// satisfies it.
type UnavailableRecorder interface {
	MarkUnavailable(ctx context.Context, o state.Offering, reason string, ttl time.Duration) error
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
}

// LaunchResult is what a launch did.
type LaunchResult struct {
	Instance instance.Instance
	Attempts int
	// Unavailable lists the offerings found without capacity on the way (already recorded).
	Unavailable []instance.Offering
}

// ErrNoCapacity means every offering of every allowed capacity type lacked capacity.
var ErrNoCapacity = errors.New("no offering had capacity")

// Launch launches the plan's claim, falling back without a new solve: capacity types in precedence
// (reserved, then spot, then on-demand; see launchSteps), and within one the offerings left after each
// insufficient-capacity answer. Every offering found without capacity is recorded for
// state.UnavailableCapacityTTL so the next solve, in any invocation, avoids it. Errors other than
// capacity stop the launch and are returned as they are (see instance.KindOf).
func Launch(ctx context.Context, l InstanceLauncher, rec UnavailableRecorder, plan LaunchPlan) (LaunchResult, error) {
	var res LaunchResult
	for _, step := range launchSteps(plan) {
		remaining := step.overrides
		for len(remaining) > 0 {
			if res.Attempts == MaxLaunchAttempts {
				return res, fmt.Errorf("launching claim %s: gave up after %d attempts: %w", plan.Request.Claim, res.Attempts, ErrNoCapacity)
			}
			req := plan.Request
			req.CapacityType, req.Overrides = step.capacityType, truncate(remaining)
			if res.Attempts > 0 {
				req.ClientToken = attemptToken(plan.Request.Claim, res.Attempts)
			}
			res.Attempts++
			inst, err := l.Launch(ctx, req)
			if err == nil {
				// Pools the fleet skipped for lack of capacity are as unavailable as a failed launch's.
				if len(inst.NoCapacity) > 0 {
					skipped := &instance.InsufficientCapacityError{Offerings: inst.NoCapacity, Codes: []string{"InsufficientInstanceCapacity"}}
					if err := record(ctx, rec, skipped); err != nil {
						return res, err
					}
					res.Unavailable = append(res.Unavailable, inst.NoCapacity...)
				}
				res.Instance = inst
				return res, nil
			}
			var ice *instance.InsufficientCapacityError
			if !errors.As(err, &ice) {
				return res, err
			}
			if err := record(ctx, rec, ice); err != nil {
				return res, err
			}
			res.Unavailable = append(res.Unavailable, ice.Offerings...)
			remaining = without(remaining, ice.Offerings, req.Overrides)
		}
	}
	return res, fmt.Errorf("launching claim %s: %w", plan.Request.Claim, ErrNoCapacity)
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

func record(ctx context.Context, rec UnavailableRecorder, ice *instance.InsufficientCapacityError) error {
	reason := "InsufficientCapacity"
	if len(ice.Codes) > 0 {
		reason = ice.Codes[0]
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
