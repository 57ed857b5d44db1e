package scalebench

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/sizing"
)

// Scenario sets up what one function's run needs on a loaded tier and tidies up after it, so that each
// repetition, and the next function, find the tier as loaded.
type Scenario interface {
	// Arrange prepares repetition rep (0, 1, ...) and returns the function's payload.
	Arrange(ctx context.Context, rep int) (Payload, error)
	// Tidy undoes what repetition rep's runs changed.
	Tidy(ctx context.Context, rep int) error
	// Finish removes what Arrange added for every repetition.
	Finish(ctx context.Context) error
}

// Functions are the functions the harness measures, in the order it runs them.
var Functions = []string{sizing.Provisioner, sizing.Lifecycle, sizing.Disruption, sizing.Termination, sizing.Interruption}

// NewScenario returns fn's scenario on the loaded tier.
func NewScenario(fn string, env *Env, l *Loaded) (Scenario, error) {
	w := world{env: env, l: l, ec2: ec2.NewFromConfig(env.AWS)}
	switch fn {
	case sizing.Provisioner:
		return &provisionerScenario{world: w}, nil
	case sizing.Lifecycle:
		return &lifecycleScenario{world: w}, nil
	case sizing.Disruption:
		return &disruptionScenario{world: w}, nil
	case sizing.Termination:
		return &terminationScenario{world: w}, nil
	case sizing.Interruption:
		return &interruptionScenario{world: w}, nil
	}
	return nil, fmt.Errorf("no scenario for function %q", fn)
}

// world is what scenarios work on.
type world struct {
	env *Env
	l   *Loaded
	ec2 *ec2.Client
}

// planned reports the claims the loader wrote.
func (w world) planned() map[string]bool {
	out := map[string]bool{}
	for _, n := range w.l.Plan.Nodes {
		out[n.Claim] = true
	}
	return out
}

// retireNewClaims marks deleted every live claim the loader did not write except those in keep (the
// provisioner's and disruption's launches, a scenario's own), and terminates their instances.
func (w world) retireNewClaims(ctx context.Context, keep map[string]bool) (int, error) {
	claims, err := w.env.Store.ListClaims(ctx)
	if err != nil {
		return 0, err
	}
	planned := w.planned()
	var ids []string
	n := 0
	for _, c := range claims {
		if planned[c.Name] || keep[c.Name] || c.Lifecycle == state.Deleted {
			continue
		}
		if _, err := w.env.Store.UpdateClaim(ctx, c.Name, func(c *state.Claim) error {
			c.Lifecycle = state.Deleted
			return nil
		}); err != nil {
			return n, fmt.Errorf("retiring claim %s: %w", c.Name, err)
		}
		n++
		if c.InstanceID != "" {
			ids = append(ids, c.InstanceID)
		}
	}
	if len(ids) > 0 {
		if _, err := w.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids}); err != nil {
			return n, fmt.Errorf("terminating %d instances: %w", len(ids), err)
		}
	}
	return n, nil
}
