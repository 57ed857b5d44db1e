package lifecycle

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// MirrorWriter keeps the NodeClaim mirrors in the cluster equal to the claims; *mirror.Writer satisfies
// it. whole says objs are every live claim (a sweep): then the mirrors of claims not among them are
// deleted, and changes others made to mirrors are followed first.
type MirrorWriter interface {
	Sync(ctx context.Context, objs []mirror.Object, whole bool) (mirror.Report, error)
}

var _ MirrorWriter = (*mirror.Writer)(nil)

// writeMirrors writes the NodeClaim mirror of every claim the pass read, as the pass left it (its
// lifecycle, its Node, why it waits), on change only and at most mirror.Options.MaxWrites a pass (the
// writer's bound). A sweep reads every live claim, so it also deletes the mirrors of claims that are gone;
// a pass between sweeps reads only the joining claims, the ones that change, and writes theirs, so a
// joining Node's mirror follows it within a pass. A pass near its deadline leaves the mirrors to the next.
// After a sweep's Sync, the mirrors users deleted become disruption requests (mirrordeletions.go).
func (p *passState) writeMirrors(ctx context.Context, sweep bool) {
	if p.r.deps.Mirrors == nil {
		return
	}
	if p.late(ctx) {
		p.rep.MirrorsSkipped = "the pass came within its margin of the deadline; the next pass writes the mirrors"
		return
	}
	w := p.w
	var byProvider map[string]*corev1.Node
	now := p.r.deps.Now()
	objs := make([]mirror.Object, 0, len(w.claims))
	for _, c := range w.claims {
		l := p.lifecycle[c.Name]
		if l == state.Deleted {
			continue
		}
		node := w.nodeByName(c.NodeName)
		if node == nil && c.ProviderID != "" {
			if byProvider == nil {
				byProvider = make(map[string]*corev1.Node, len(w.nodes))
				for _, n := range w.nodes {
					if n.Spec.ProviderID != "" {
						byProvider[n.Spec.ProviderID] = n
					}
				}
			}
			node = byProvider[c.ProviderID]
		}
		objs = append(objs, mirror.NodeClaim(mirror.Claim{Record: c, Lifecycle: l, Node: node, Waiting: p.rep.Waiting[c.Name], Now: now}))
	}
	rep, err := p.r.deps.Mirrors.Sync(ctx, objs, sweep)
	p.rep.MirrorsWritten += rep.Written
	p.rep.MirrorsDeleted += rep.Deleted
	p.rep.MirrorsLeft = rep.Left
	p.rep.Errors = append(p.rep.Errors, rep.Errors...)
	if err != nil {
		p.rep.Errors = append(p.rep.Errors, "nodeclaim mirrors: "+err.Error())
		return
	}
	if sweep {
		p.requestMirroredDeletions(ctx)
	}
}
