package disruptionrun

import (
	"context"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/driftinput"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// ProvisionerLauncher launches replacements through a provisioning.Provisioner: the same catalog,
// node classes, launch templates and launch path (claim recorded first, its name as the ClientToken).
type ProvisionerLauncher struct{ P *provisioning.Provisioner }

var _ Launcher = ProvisionerLauncher{}

// PrepareLaunches reads what a launch needs (see provisioning.Provisioner.PrepareLaunches).
func (l ProvisionerLauncher) PrepareLaunches(ctx context.Context) (Launches, error) {
	v, err := l.P.PrepareLaunches(ctx)
	if err != nil {
		return nil, err
	}
	return provisioningLaunches{v}, nil
}

// ClaimName draws a claim name as a provisioning run does.
func (l ProvisionerLauncher) ClaimName(nodePool string) string { return l.P.ClaimName(nodePool) }

type provisioningLaunches struct{ v *provisioning.Launches }

func (p provisioningLaunches) NodePools() []scheduling.NodePool             { return p.v.Pools }
func (p provisioningLaunches) Unavailable() scheduling.UnavailableOfferings { return p.v.Unavailable }
func (p provisioningLaunches) Problems() []string                           { return p.v.Problems }
func (p provisioningLaunches) Settings() settings.Settings                  { return p.v.Settings() }
func (p provisioningLaunches) InFlight(claims []state.Claim, snap *kube.Snapshot) []scheduling.InFlightClaim {
	return p.v.InFlight(claims, snap)
}
func (p provisioningLaunches) Record(ctx context.Context, cp scheduling.ClaimPlan, name string, replaces []string) (PendingLaunch, error) {
	pl, err := p.v.Record(ctx, cp, name, replaces)
	if err != nil {
		return nil, err
	}
	return pendingLaunch{pl}, nil
}

type pendingLaunch struct{ p *provisioning.PendingLaunch }

func (p pendingLaunch) Name() string { return p.p.Name }
func (p pendingLaunch) Launch(ctx context.Context) (*provisioning.LaunchedClaim, error) {
	return p.p.Launch(ctx)
}

func (p provisioningLaunches) Drift(c state.Claim, obs driftinput.Observed) drift.Result {
	return p.v.Drift(c, obs)
}
func (p provisioningLaunches) Lifetime(c state.Claim) drift.Lifetime { return p.v.Lifetime(c) }
func (p provisioningLaunches) Reservations() map[string]apis.CapacityReservationStatus {
	return p.v.Reservations()
}
func (p provisioningLaunches) OnDemandPrice(instanceType string) (float64, bool) {
	return p.v.OnDemandPrice(instanceType)
}
func (p provisioningLaunches) StaticReplacement(pool string, base scheduling.Input) (scheduling.ClaimPlan, error) {
	return p.v.StaticReplacement(pool, base)
}
func (p provisioningLaunches) ClassBackoff(nodePool string, claims []state.Claim, now time.Time) (state.ClassBackoff, bool) {
	return p.v.ClassBackoff(nodePool, claims, now)
}
