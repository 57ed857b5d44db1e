package provisioning

import (
	"context"
	"fmt"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// LaunchMirrors writes the NodeClaim mirror (nodewright.sh/v1) of each claim a run launched, once the run
// has recorded the launch: `kubectl get nodeclaims.nodewright.sh` shows the claim within a second or two
// of its launch, READY False ("Registered is not true: Node not registered with cluster") until its Node
// joins. Without it the mirror appeared only when the lifecycle function next passed, which a deployed
// stack starts on the instance's running event or its one-minute schedule: tens of seconds after the
// launch. From there the lifecycle function keeps the mirror (registration, initialization, drift,
// disruption, deletion); the provisioner never deletes one.
type LaunchMirrors struct {
	// Claims reads each launched claim back as recorded (*state.Store).
	Claims ClaimReader
	// Writer writes the mirrors (*mirror.Writer over the provisioner's identity). It is used for new
	// mirrors only (Sync without whole): it never follows others' changes nor deletes, and bounds a run's
	// writes at its MaxWrites. Its first use in a process learns the mirrors with one paginated,
	// metadata-only LIST, as the lifecycle's writer does on a cold start.
	Writer MirrorWriter
}

// ClaimReader reads one claim by name; *state.Store satisfies it.
type ClaimReader interface {
	GetClaim(ctx context.Context, name string) (state.Claim, error)
}

// MirrorWriter keeps mirrors equal to what it is given; *mirror.Writer satisfies it.
type MirrorWriter interface {
	Sync(ctx context.Context, objs []mirror.Object, whole bool) (mirror.Report, error)
}

var (
	_ ClaimReader  = (*state.Store)(nil)
	_ MirrorWriter = (*mirror.Writer)(nil)
)

// MaxLaunchMirrors bounds the claims a run reads back and mirrors: one strongly consistent GetItem each,
// then the writer's two or three requests, some 150 requests in all, about 1.5 s of the function's
// client budget (kube.DefaultQPS 100). A burst's run launches up to 200 claims: the rest are left to the
// lifecycle function's next pass, as is whatever Config.LaunchMirrorBudget does not cover.
const MaxLaunchMirrors = 50

// writeLaunchMirrors writes the mirrors of the claims rep says the run launched. It runs after the run
// (Run: once the lease is given back; Handle: beside the next run, afterRunJob), so it adds nothing to a
// pod's wait nor to a batch's; it is skipped when the run is within LaunchMargin of its deadline, and it stops
// at Config.LaunchMirrorBudget: what is not written by then is left (rep.MirrorsLeft), not failed, since
// the lifecycle function writes it on its next pass anyway. Other failures go into rep.Errors.
func (p *Provisioner) writeLaunchMirrors(ctx context.Context, rep *Report) {
	m := p.deps.Mirrors
	if m == nil || len(rep.Claims) == 0 {
		return
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(p.deps.Now()) < p.cfg.LaunchMargin {
		rep.MirrorsLeft = len(rep.Claims)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.LaunchMirrorBudget)
	defer cancel()
	launched := rep.Claims
	if len(launched) > MaxLaunchMirrors {
		rep.MirrorsLeft = len(launched) - MaxLaunchMirrors
		launched = launched[:MaxLaunchMirrors]
	}
	now := p.deps.Now()
	objs := make([]mirror.Object, 0, len(launched))
	for i, l := range launched {
		c, err := m.Claims.GetClaim(ctx, l.Name)
		if ctx.Err() != nil {
			// Out of budget: these and the ones read already are left to the lifecycle function.
			rep.MirrorsLeft += len(launched) - i + len(objs)
			return
		}
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("nodeclaim mirror %s: reading the claim back: %v", l.Name, err))
			continue
		}
		if !c.Lifecycle.Live() {
			continue // gone already (its instance died at launch): nothing to show
		}
		objs = append(objs, mirror.NodeClaim(mirror.Claim{Record: c, Now: now}))
	}
	if len(objs) == 0 {
		return
	}
	out, err := m.Writer.Sync(ctx, objs, false)
	rep.MirrorsWritten += out.Written
	rep.MirrorsLeft += out.Left
	if ctx.Err() != nil {
		// The budget ran out: the writes it cut short are left to the lifecycle function, not failed.
		rep.MirrorsLeft += len(out.Errors)
		return
	}
	rep.Errors = append(rep.Errors, out.Errors...)
	if err != nil {
		rep.Errors = append(rep.Errors, "nodeclaim mirrors: "+err.Error())
	}
}
