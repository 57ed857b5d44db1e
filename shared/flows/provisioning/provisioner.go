package provisioning

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/runbudget"
	"github.com/nodewright/nodewright/shared/adapters/sqsbatch"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// LeaseName is the state-table lease that makes provisioning single-writer per cluster (DESIGN decision 4).
const LeaseName = "provisioner"

// Defaults of Config.
const (
	DefaultLeaseTTL = 2 * time.Minute
	// DefaultLaunchMargin is how much time must be left before the deadline to start a launch: a claim
	// write, a template, up to MaxLaunchAttempts CreateFleet calls and the claim update.
	DefaultLaunchMargin = 20 * time.Second
	// DefaultColdRunEstimate is how long a run is assumed to take before this process measured one (see
	// Handle): 1.5 times the provisioner's target at the largest tier (20 s at 150,000 pods, issue #23),
	// for a cold process whose first reads are its slowest.
	DefaultColdRunEstimate = 30 * time.Second
	// DefaultLaunchMirrorBudget bounds the time a run spends writing its launched claims' mirrors
	// (launchmirrors.go), after everything else it does: what is not written by then is the lifecycle
	// function's to write on its next pass.
	DefaultLaunchMirrorBudget = 3 * time.Second
)

// Store is the part of the state table a provisioning run uses; *state.Store satisfies it.
type Store interface {
	ConfigReader
	UnavailableRecorder
	MemoryReader
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (state.Lease, error)
	ReleaseLease(ctx context.Context, l state.Lease) error
	UnavailableOfferings(ctx context.Context) ([]state.UnavailableOffering, error)
	UnavailableSubnets(ctx context.Context) ([]state.UnavailableSubnet, error)
	ClassFailures(ctx context.Context) ([]state.ClassFailures, []error, error)
	ListClaims(ctx context.Context) ([]state.Claim, error)
	CreateClaim(ctx context.Context, c state.Claim) (state.Claim, error)
	CreateClaims(ctx context.Context, cs []state.Claim) ([]state.Claim, error)
	PutClaims(ctx context.Context, olds, news []state.Claim) ([]state.Claim, error)
	UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error)
	RecordDecision(ctx context.Context, d state.Decision) error
	RecordDecisions(ctx context.Context, ds []state.Decision) error
	Mark(ctx context.Context, name string) (time.Time, error)
	AdvanceMark(ctx context.Context, name string, at time.Time) error
	Revision(ctx context.Context, name string) (uint64, error)
	AdvanceRevision(ctx context.Context, name string, rv uint64) error
}

var _ Store = (*state.Store)(nil)

// Config is the provisioner's fixed settings.
type Config struct {
	// Cluster is what nodes need to join: name, endpoint, CA, service CIDR, DNS.
	Cluster launchtemplate.Cluster
	// KubernetesVersion ("1.34") selects AMIs behind aliases.
	KubernetesVersion string
	// Region is the AWS region nodes launch in: every instance type's topology.kubernetes.io/region
	// requirement. "" leaves region unconstrained.
	Region string
	// LeaseTTL bounds a run that dies holding the lease when its context has no deadline; a run with a
	// deadline (every Lambda invocation) holds it until then and no longer (state.LeaseTTLFor).
	// LaunchMargin: see DefaultLaunchMargin.
	LeaseTTL, LaunchMargin time.Duration
	// Retry says how soon a batch handed back to SQS comes again (see BatchResponse).
	Retry sqsbatch.Policy
	// ColdRunEstimate: see DefaultColdRunEstimate.
	ColdRunEstimate time.Duration
	// LaunchMirrorBudget: see DefaultLaunchMirrorBudget.
	LaunchMirrorBudget time.Duration
}

// Dependencies are the adapters a run goes through. The catalog (DescribeInstanceTypes and offerings)
// is read on the first run that has pods to place and kept for the Provisioner's life (a warm Lambda
// container); prices are read on every run.
type Dependencies struct {
	Store       Store
	Cluster     ClusterReader
	NodeClasses NodeClassResolver
	Catalog     instancetypes.EC2API
	Prices      instancetypes.Prices
	Templates   LaunchTemplates
	Launcher    InstanceLauncher
	// Events publishes Kubernetes Events (Nominated, FailedScheduling); nil publishes none.
	Events EventPublisher
	// Now is the clock; Rand draws claim name suffixes.
	Now  func() time.Time
	Rand *rand.Rand
	// SpotPrices, when set, loads the stored spot price table into Prices before a run prices offerings
	// (StoredSpotPrices reads it at most once a minute); nil leaves Prices as they are.
	SpotPrices SpotPriceSource
	// Pods reads the pods a queue batch names, to tell whether completed runs saw them (see Handle);
	// nil judges them by when their messages were sent.
	Pods PodReader
	// Visibility makes a batch handed back to SQS visible again in seconds; nil leaves it to the
	// queue's visibility timeout.
	Visibility sqsbatch.VisibilityChanger
	// Buffers reads the cluster's CapacityBuffers and writes their status when the CapacityBuffer gate
	// is on (buffers.go); nil reads none.
	Buffers capacitybuffer.Cluster
	// Mirrors writes the NodeClaim mirror of each claim a run launched (launchmirrors.go); nil writes none
	// (the lifecycle function's passes do).
	Mirrors *LaunchMirrors
}

// Provisioner runs provisioning: one solve over the whole cluster and the launches it asks for. It is
// safe for concurrent use; the lease lets one run at a time proceed, across processes.
type Provisioner struct {
	cfg  Config
	deps Dependencies

	mu      sync.Mutex // guards catalog and deps.Rand
	catalog *instancetypes.Catalog
	// failures remembers which unschedulable pods were recorded lately (see FailedSchedulingInterval).
	failures failureMemo
	// runs measures how long this process's runs take, so Handle starts another only if it fits.
	runs runbudget.Meter
	// settings are those the last configuration read found (batchSettings).
	settings atomic.Pointer[settings.Settings]
	// pending are the pending pods the last run saw (Report.NewlyPlaced).
	pending pendingSeen
	// lastCapacity is when this process last summed the capacity (UnixNano; see noteCapacity).
	lastCapacity atomic.Int64
	// shared are the inputs the last complete read found that chained runs may plan with again, and marks
	// counts the offerings and subnets this provisioner marked unavailable (SharedInputsMaxAge).
	shared sharedInputs
	marks  atomic.Uint64
}

// New returns a provisioner. Zero durations in cfg take their defaults.
func New(cfg Config, deps Dependencies) *Provisioner {
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.LaunchMargin <= 0 {
		cfg.LaunchMargin = DefaultLaunchMargin
	}
	if cfg.ColdRunEstimate <= 0 {
		cfg.ColdRunEstimate = DefaultColdRunEstimate
	}
	if cfg.LaunchMirrorBudget <= 0 {
		cfg.LaunchMirrorBudget = DefaultLaunchMirrorBudget
	}
	p := &Provisioner{cfg: cfg}
	if deps.Store != nil {
		deps.Store = markCounter{Store: deps.Store, marks: &p.marks}
	}
	p.deps = deps
	return p
}

// Run is one provisioning run, holding the lease as runID. When another run holds the lease it returns
// at once with Report.Lease false and no error: that run will see the same pending pods. The error is
// for anything that keeps the run from deciding on complete data (configuration, cluster, catalog,
// claims or unavailable offerings could not be read); problems with single items, classes or launches
// are in Report.Errors. State is left consistent whatever happens: a claim is written before its launch,
// and one whose outcome is unknown stays pending for the reconciler to adopt or time out.
func (p *Provisioner) Run(ctx context.Context, runID string) (Report, error) {
	var rep Report
	var runErr error
	held, notReleased, err := p.leasedRuns(ctx, runID, 0, func(r Report, err error) bool {
		rep, runErr = r, err
		return false
	})
	if !held {
		return Report{}, err
	}
	rep.LeaseNotReleased = notReleased
	p.startAfterRun(ctx, rep).finish(&rep)
	return rep, runErr
}

func (p *Provisioner) run(ctx context.Context, runID string, rep *Report) (err error) {
	snapshotAt := p.deps.Now()
	rep.Started = snapshotAt
	in, err := p.read(ctx)
	prepareStart := p.deps.Now()
	rep.ReadDuration = prepareStart.Sub(snapshotAt)
	if err != nil {
		return err
	}
	cfg, snap, claims, unavailable := in.cfg, in.snap, in.claims, in.unavailable
	index := NewClaimIndex(claims)
	defer func() {
		if err == nil && ctx.Err() == nil {
			p.noteCapacity(ctx, snapshotAt, snap, index, rep)
		}
	}()
	p.remember(cfg.settings)
	rep.Errors = append(rep.Errors, in.problems...)
	for _, err := range in.badFailures {
		rep.Errors = append(rep.Errors, err.Error())
	}
	disrupted := disruptedNodes(snap, index)
	pods := append(provisionablePods(snap), reschedulablePods(snap, disrupted)...)
	rep.PendingPods = len(pods)
	needs, limited := staticNeeds(cfg.static, claims)
	rep.Static = append(rep.Static, limited...)
	// A CapacityBuffer's virtual pods are planned for as pending pods: room they find on existing nodes
	// and claims in flight keeps them; otherwise capacity is launched for them.
	buffers := p.readBuffers(ctx, cfg, rep)
	virtual := buffers.Pods()
	rep.BufferPods = len(virtual)
	pods = append(pods, virtual...)
	if len(pods) == 0 && len(needs) == 0 {
		_, _ = p.pending.placedNew(nil, nil)
		p.writeBufferStatus(ctx, buffers, nil, rep)
		p.markSnapshot(ctx, snapshotAt, snap.PodsResourceVersion, rep)
		return nil
	}
	cat, err := p.readCatalog(ctx)
	if err != nil {
		return err
	}
	p.loadSpotPrices(ctx, rep)
	classes, pools, problems, failedClasses, unresolved := prepareClasses(ctx, p.deps.NodeClasses, cat, p.deps.Prices, withStaticNeeds(cfg, needs), p.cfg.KubernetesVersion, in.memory,
		subnetView{run: newRunSubnets(in.subnetMarks), claims: claims})
	pools, staticPrepared := splitStatic(pools, needs)
	rep.Errors = append(rep.Errors, problems...)
	events := classEvents(poolNames(cfg.pools), poolClasses(cfg.pools), failedClasses, unresolved)
	for _, name := range unresolved {
		// Reading the class failed (throttled, a 500, a timeout past the client's retries): its pools' pods
		// need another run, so the trigger that woke this one is not satisfied by it.
		rep.Skipped = append(rep.Skipped, fmt.Sprintf("EC2NodeClass %s could not be resolved; its NodePools' pods wait for the next run", name))
	}
	inFlight := inFlightClaims(claims, joined(snap), pools, classes)
	rep.InFlight = len(inFlight)
	backoffs := classBackoffs(in.classFailures, cfg.classHash, claims, p.deps.Now())
	pools, held := withoutBackedOff(pools, backoffs)
	for _, name := range slices.Sorted(maps.Keys(backoffs)) {
		rep.BackingOff = append(rep.BackingOff, backoffs[name].String())
	}

	start := p.deps.Now()
	rep.PrepareDuration = start.Sub(prepareStart)
	input := scheduling.Input{Pods: pods, Nodes: withoutDisrupted(existingNodes(snap, index), disrupted), InFlight: inFlight,
		NodePools: pools, DaemonSets: snap.DaemonSets, Unavailable: unavailable,
		PersistentVolumeClaims: snap.PVCs, PersistentVolumes: snap.PVs,
		StorageClasses: snap.StorageClasses, CSINodes: snap.CSINodes, Namespaces: snap.Namespaces,
		MinValuesPolicy: scheduling.MinValuesPolicy(cfg.settings.MinValuesPolicy), IgnorePreferences: cfg.settings.IgnorePreferences(),
		StrictReservations: true} // as Karpenter's provisioner: pods wait for a used-up reservation, no lower-weight fallback
	plan := &scheduling.Plan{}
	if len(pods) > 0 {
		if plan, err = scheduling.Solve(input); err != nil {
			return fmt.Errorf("solving: %w", err)
		}
	}
	staticPlans, staticPools := planStatic(needs, staticPrepared, backoffs, input, rep)
	plan.NewClaims = append(plan.NewClaims, staticPlans...)
	rep.SolveDuration = p.deps.Now().Sub(start)
	var isNew func(*corev1.Pod) bool
	rep.NewlyPlaced, isNew = p.pending.placedNew(pods[:len(pods)-len(virtual)], plan.Unschedulable)
	rep.PlacedInFlight = placedInFlight(plan, inFlight, isNew)
	rep.nominations = append(rep.nominations, inFlightNominations(plan, inFlight, isNew)...)
	plan.Unschedulable = explainBackedOff(plan.Unschedulable, held, backoffs, input)
	events = append(events, incompatibleEvents(plan.NoCompatibleInstanceTypes)...)

	byPool := map[string]scheduling.NodePool{}
	for _, pool := range append(pools, staticPools...) {
		byPool[pool.Name] = pool
	}
	byNode := claimsByNode(claims)
	launchStart := p.deps.Now()
	var finishStart time.Time
	defer func() {
		if !finishStart.IsZero() { // zero: a launch panicked
			rep.FinishDuration = p.deps.Now().Sub(finishStart)
		}
	}()
	p.runLaunches(ctx, plan.NewClaims, func(cp scheduling.ClaimPlan) claimLaunch {
		pool := byPool[cp.NodePool]
		return claimLaunch{store: p.deps.Store, templates: p.deps.Templates, launcher: p.deps.Launcher,
			target: claimTarget{claim: cp, pool: pool, class: classes[NodeClassRefName(pool)], unavailable: unavailable,
				cluster: p.cfg.Cluster},
			newName: func() string { return p.claimName(cp.NodePool) }, stamp: cfg.stamp(pool),
			replaces: replacedClaims(cp, disrupted, byNode)}
	}, rep)
	finishStart = p.deps.Now()
	rep.LaunchDuration = finishStart.Sub(launchStart)
	p.forgetStaleClasses(rep.LaunchFailures, byPool)
	p.publishAll(ctx, append(events, capacityEvents(rep.LaunchFailures)...), rep)
	p.recordUnschedulable(ctx, runID, withoutBufferPods(plan.Unschedulable), rep)
	p.writeBufferStatus(ctx, buffers, plan, rep)
	// Skipped pods, and those of a claim whose launch failed (a throttle or server error past the SDK's
	// retries, or no capacity: the next run solves without those offerings), still need a run: without a
	// mark the batch that woke this run is not satisfied and runs again.
	if len(rep.Skipped) == 0 && len(rep.LaunchFailures) == 0 {
		p.markSnapshot(ctx, snapshotAt, snap.PodsResourceVersion, rep)
	}
	// The Nominated Events and the launch mirrors are left for after the run (afterRunJob): they need no
	// lease and the next run does not read them.
	return nil
}

// readCatalog returns the region's instance types, discovering them on first use.
func (p *Provisioner) readCatalog(ctx context.Context) (*instancetypes.Catalog, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.catalog == nil {
		cat, err := instancetypes.Discover(ctx, p.deps.Catalog)
		if err != nil {
			return nil, fmt.Errorf("reading the instance-type catalog: %w", err)
		}
		p.catalog = cat
	}
	return p.catalog, nil
}

// unavailable reads the offerings recently found without capacity.
func (p *Provisioner) unavailable(ctx context.Context) (scheduling.UnavailableOfferings, error) {
	offs, err := p.deps.Store.UnavailableOfferings(ctx)
	if err != nil {
		return nil, err
	}
	out := scheduling.UnavailableOfferings{}
	for _, o := range offs {
		out[scheduling.OfferingKey{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType, ReservationID: o.ReservationID}] = true
	}
	return out, nil
}

func (p *Provisioner) claimName(nodePool string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return claimName(nodePool, p.deps.Rand)
}

// Catalog returns the region's instance types, reading them on first use. A function calls it while its
// execution environment starts, so the first run with pending pods does not pay for the discovery.
func (p *Provisioner) Catalog(ctx context.Context) (*instancetypes.Catalog, error) {
	return p.readCatalog(ctx)
}
