package disruptionrun

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// MirrorStatus writes the NodePool and EC2NodeClass mirrors (nodewright.sh/v1) and the Events on them;
// *mirror.StatusWriter satisfies it.
type MirrorStatus interface {
	Write(ctx context.Context, cfg mirror.Configuration, now time.Time) mirror.StatusReport
}

var _ MirrorStatus = (*mirror.StatusWriter)(nil)

// mirrorConfigurer is a Launches that can say what the NodePool and EC2NodeClass mirrors are built from
// (provisioning.Launches.MirrorConfiguration); Launches without it write no mirror.
type mirrorConfigurer interface {
	MirrorConfiguration(ctx context.Context, claims []state.Claim, nodes []corev1.Node) mirror.Configuration
}

func (p provisioningLaunches) MirrorConfiguration(ctx context.Context, claims []state.Claim, nodes []corev1.Node) mirror.Configuration {
	return p.v.MirrorConfiguration(ctx, claims, nodes)
}

// writeMirrors writes the NodePool and EC2NodeClass mirrors from the run's first complete read: the
// configuration and class resolutions PrepareLaunches made, the claims and the Nodes. It adds no read of
// its own but the resolution of a class no NodePool references (cached by the resolver), and at most
// mirror.DefaultMaxWrites writes per kind; a run with nothing changed writes nothing.
func (r *Runner) writeMirrors(ctx context.Context, w *world, rep *Report) {
	if r.deps.Mirrors == nil || w.snap == nil {
		return
	}
	mc, ok := w.launches.(mirrorConfigurer)
	if !ok {
		return
	}
	res := r.deps.Mirrors.Write(ctx, mc.MirrorConfiguration(ctx, w.claims, w.snap.Nodes), r.deps.Now())
	rep.MirrorsWritten = res.Pools.Written + res.Classes.Written
	rep.MirrorsDeleted = res.Pools.Deleted + res.Classes.Deleted
	rep.MirrorEvents = res.Events
	rep.Errors = append(rep.Errors, res.Errors...)
}
