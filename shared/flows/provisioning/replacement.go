package provisioning

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// Launches is what one caller outside provisioning needs to plan and launch claims itself, through the
// same path as a provisioning run (claim record first, the claim name as CreateFleet's ClientToken,
// adoption by tag on retry): the NodePools that can launch, each with its EC2NodeClass's instance types,
// and the offerings found without capacity. Consolidation builds its replacements from it, and the
// disruption runner judges drift and expiry with it (Drift, Lifetime) against the same configuration.
type Launches struct {
	p       *Provisioner
	cfg     runConfig
	classes map[string]*readyClass
	// resolver remembers this read's class resolutions (MirrorConfiguration).
	resolver *recordingResolver
	// classFailures say why each EC2NodeClass a NodePool references is unusable (not configured, failed
	// to resolve, not ready...), for drift.
	classFailures map[string]string
	// launchFailures are the instances per EC2NodeClass that died at launch (ClassBackoff).
	launchFailures []state.ClassFailures
	// targets are what Drift compares claims with, per NodePool, built on first use (claimdrift.go), and
	// offers the catalog they look instance types up in, indexed on first use (driftcatalog.go).
	driftMu     sync.Mutex
	targets     map[string]*poolTarget
	catalog     *instancetypes.Catalog
	offers      *driftCatalog
	byPool      map[string]scheduling.NodePool
	Pools       []scheduling.NodePool
	Unavailable scheduling.UnavailableOfferings
	// Problems are configuration items left out and NodePools that cannot launch (class not ready...).
	Problems []string
	// static are the static NodePools prepared (instance types set), by name (StaticReplacement).
	static map[string]scheduling.NodePool
}

// PrepareLaunches reads the configuration, the catalog (once per Provisioner), the observed memory, spot
// prices, the unavailable offerings and the launch failures per EC2NodeClass, and resolves every
// EC2NodeClass. The error is for what keeps a caller from deciding on complete data: the configuration,
// catalog, observed memory, unavailable offerings or launch failures could not be read.
func (p *Provisioner) PrepareLaunches(ctx context.Context) (*Launches, error) {
	cfg, problems, err := readConfig(ctx, p.deps.Store)
	if err != nil {
		return nil, err
	}
	cfg.region = p.cfg.Region
	p.remember(cfg.settings)
	cat, err := p.readCatalog(ctx)
	if err != nil {
		return nil, err
	}
	observed, err := readObservedMemory(ctx, p.deps.Store)
	if err != nil {
		return nil, err
	}
	var rep Report
	p.loadSpotPrices(ctx, &rep)
	marks, err := p.deps.Store.UnavailableSubnets(ctx)
	if err != nil {
		return nil, err
	}
	// The caller's claims are not read yet: the prediction counts this caller's own launches only. Static
	// pools are prepared too (their classes resolved once with the rest), for StaticReplacement. Each
	// resolution is remembered for the mirrors (MirrorConfiguration).
	statics := staticNeedsOf(cfg.static)
	resolver := &recordingResolver{r: p.deps.NodeClasses, got: map[string]resolved{}}
	classes, pools, more, failed, _ := prepareClasses(ctx, resolver, cat, p.deps.Prices, withStaticNeeds(cfg, statics),
		p.cfg.KubernetesVersion, observed, subnetView{run: newRunSubnets(marks)})
	pools, static := splitStatic(pools, statics)
	unavailable, err := p.unavailable(ctx)
	if err != nil {
		return nil, err
	}
	launchFailures, bad, err := p.deps.Store.ClassFailures(ctx)
	if err != nil {
		return nil, err
	}
	for _, err := range bad {
		more = append(more, err.Error())
	}
	l := &Launches{p: p, cfg: cfg, resolver: resolver, classes: classes, classFailures: failed, launchFailures: launchFailures, catalog: cat,
		byPool: map[string]scheduling.NodePool{}, static: static, Pools: pools, Unavailable: unavailable, Problems: append(append(problems, rep.Errors...), more...)}
	for _, pool := range pools {
		l.byPool[pool.Name] = pool
	}
	return l, nil
}

// Settings are the deployment's settings as this read found them (settings.Default when none are stored).
func (l *Launches) Settings() settings.Settings { return l.cfg.settings }

// ClassBackoff says whether the EC2NodeClass of nodePool is backing off at now, as a provisioning run
// judges it (instances died at launch since a node of the class, among claims, last initialized): a
// replacement there must wait as a provisioning launch would.
func (l *Launches) ClassBackoff(nodePool string, claims []state.Claim, now time.Time) (state.ClassBackoff, bool) {
	pool, ok := l.byPool[nodePool]
	if !ok || len(l.launchFailures) == 0 {
		return state.ClassBackoff{}, false
	}
	b, held := classBackoffs(l.launchFailures, l.cfg.classHash, claims, now)[NodeClassRefName(pool)]
	return b, held
}

// InFlight are the claims written or launched whose Nodes have not registered, as the scheduler counts
// them (see inFlightClaims).
func (l *Launches) InFlight(claims []state.Claim, snap *kube.Snapshot) []scheduling.InFlightClaim {
	return inFlightClaims(claims, joined(snap), l.Pools, l.classes)
}

// Launch records and launches one planned claim (Record, then PendingLaunch.Launch).
func (l *Launches) Launch(ctx context.Context, cp scheduling.ClaimPlan, name string, replaces []string) (*LaunchedClaim, error) {
	p, err := l.Record(ctx, cp, name, replaces)
	if err != nil {
		return nil, err
	}
	return p.Launch(ctx)
}

// PendingLaunch is a claim whose pending record is written and whose instance is not launched yet.
type PendingLaunch struct {
	cl     claimLaunch
	labels map[string]string
	// Name is the name the claim was recorded under.
	Name string
}

// Record writes the pending record of one planned claim named name (another name is drawn if it is
// taken) that replaces the claims named in replaces (state.Claim.Replaces). From then on provisioning
// runs count it as capacity in flight, so a caller that records its claims before it disrupts nodes
// (taints them) never has their pods launched for twice.
func (l *Launches) Record(ctx context.Context, cp scheduling.ClaimPlan, name string, replaces []string) (*PendingLaunch, error) {
	pool, ok := l.byPool[cp.NodePool]
	if !ok {
		pool, ok = l.static[cp.NodePool] // a static pool's 1:1 drift replacement (StaticReplacement)
	}
	if !ok {
		return nil, fmt.Errorf("NodePool %s cannot launch", cp.NodePool)
	}
	rc := l.classes[NodeClassRefName(pool)]
	if rc == nil {
		return nil, errors.New("EC2NodeClass " + NodeClassRefName(pool) + " is not ready")
	}
	first := true
	cl := claimLaunch{store: l.p.deps.Store, templates: l.p.deps.Templates, launcher: l.p.deps.Launcher,
		target: claimTarget{claim: cp, pool: pool, class: rc, unavailable: l.Unavailable, cluster: l.p.cfg.Cluster},
		newName: func() string {
			if first && name != "" {
				first = false
				return name
			}
			return l.p.claimName(cp.NodePool)
		},
		stamp: l.cfg.stamp(pool), replaces: replaces}
	labels, err := cl.record(ctx)
	if err != nil {
		return nil, err
	}
	return &PendingLaunch{cl: cl, labels: labels, Name: cl.name}, nil
}

// Launch launches the recorded claim through the provisioning launch path (the claim name as the
// CreateFleet ClientToken). The returned claim is set whenever an instance was launched; on an error
// with no instance the claim is deleted (nothing started) or left pending for the reconciler to adopt or
// time out (outcome unknown), as a provisioning launch.
func (p *PendingLaunch) Launch(ctx context.Context) (*LaunchedClaim, error) {
	return p.cl.launch(ctx, p.labels)
}

// ClaimName draws a fresh claim name for nodePool ("<nodepool>-<5 random characters>").
func (p *Provisioner) ClaimName(nodePool string) string { return p.claimName(nodePool) }
