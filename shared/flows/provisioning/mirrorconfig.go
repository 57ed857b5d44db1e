package provisioning

import (
	"context"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// recordingResolver remembers each resolution a PrepareLaunches made, ready or not, so the NodePool and
// EC2NodeClass mirrors show what the run found without resolving the classes again.
type recordingResolver struct {
	r   NodeClassResolver
	mu  sync.Mutex
	got map[string]resolved
}

type resolved struct {
	res nodeclass.Resolution
	err error
}

func (r *recordingResolver) Resolve(ctx context.Context, nc *apis.EC2NodeClass, k8sVersion string) (nodeclass.Resolution, error) {
	res, err := r.r.Resolve(ctx, nc, k8sVersion)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[nc.Name] = resolved{res: res, err: err}
	return res, err
}

func (r *recordingResolver) resolutions() map[string]resolved {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.got)
}

// MirrorConfiguration is what the NodePool and EC2NodeClass mirrors are built from, as this run read the
// configuration and resolved the classes: every stored NodePool (with why the scheduler cannot use it,
// if it cannot) and its live claims among claims, each with its Node's capacity among nodes (else its
// instance type's, from the catalog; nil before its launch is answered), and every stored EC2NodeClass with
// its resolution. A class no NodePool references (PrepareLaunches resolves only those) is resolved here,
// through the resolver's cache; a class whose resolution failed is named in Unresolved. The reads are the
// run's: claims and nodes are the caller's whole read, and no AWS call is made for a class the run
// resolved already.
func (l *Launches) MirrorConfiguration(ctx context.Context, claims []state.Claim, nodes []corev1.Node) mirror.Configuration {
	var out mirror.Configuration
	got := map[string]resolved{}
	if l.resolver != nil {
		got = l.resolver.resolutions()
	}
	for _, name := range slices.Sorted(maps.Keys(l.cfg.nodeClasses)) {
		nc := l.cfg.nodeClasses[name]
		r, ok := got[name]
		if !ok {
			r.res, r.err = l.p.deps.NodeClasses.Resolve(ctx, nc, l.p.cfg.KubernetesVersion)
		}
		if r.err != nil {
			out.Unresolved = append(out.Unresolved, name)
			continue
		}
		out.Classes = append(out.Classes, mirror.Class{EC2NodeClass: nc, Status: r.res.Status})
	}

	byName := make(map[string]*corev1.Node, len(nodes))
	byProvider := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
		if id := nodes[i].Spec.ProviderID; id != "" {
			byProvider[id] = &nodes[i]
		}
	}
	byPool := map[string][]mirror.PoolClaim{}
	for _, c := range claims {
		if c.Lifecycle == state.Deleted {
			continue
		}
		byPool[c.NodePool] = append(byPool[c.NodePool], mirror.PoolClaim{Claim: c, Capacity: l.capacityOf(c, byName, byProvider)})
	}
	for _, name := range slices.Sorted(maps.Keys(l.cfg.nodePools)) {
		np := l.cfg.nodePools[name]
		p := mirror.Pool{NodePool: np, TemplateHash: l.cfg.poolHash[name], Claims: byPool[name]}
		if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
			p.ClassHash = l.cfg.classHash[ref.Name]
		}
		if _, err := NodePoolsFrom(apis.Objects{NodePools: []*apis.NodePool{np}}); err != nil {
			p.Invalid = err.Error()
		}
		out.Pools = append(out.Pools, p)
	}
	return out
}

// capacityOf is what a claim adds to its pool's status.resources: its Node's capacity once the Node is
// in the cluster, else its launched instance type's capacity from the catalog; nil when neither is known.
func (l *Launches) capacityOf(c state.Claim, byName, byProvider map[string]*corev1.Node) corev1.ResourceList {
	n := byName[c.NodeName]
	if n == nil && c.ProviderID != "" {
		n = byProvider[c.ProviderID]
	}
	if n != nil && len(n.Status.Capacity) > 0 {
		return n.Status.Capacity
	}
	if c.InstanceType == "" || c.InstanceID == "" {
		return nil
	}
	if rc := l.classes[c.NodeClass]; rc != nil {
		if it := rc.byName[c.InstanceType]; it != nil {
			return it.Capacity.List()
		}
	}
	return nil
}
