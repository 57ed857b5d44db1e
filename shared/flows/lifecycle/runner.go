package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/runbudget"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// LeaseName is the state-table lease that lets one lifecycle pass run at a time per cluster.
const LeaseName = "lifecycle"

// Defaults of RunnerConfig.
const (
	DefaultLeaseTTL = 2 * time.Minute
	// DefaultSettleMargin is how much time RunUntilSettled leaves before the deadline: one more pass
	// (three lists, a few patches and writes) and the lease release.
	DefaultSettleMargin = 10 * time.Second
	// DefaultSweepEvery is the lifecycle function's RunnerConfig.SweepEvery: shorter than its one-minute
	// schedule, so an invocation's first pass sweeps (and so does every pass when nothing joins, one a
	// minute), while the passes every few seconds in between only register and initialize.
	DefaultSweepEvery = 50 * time.Second
)

// Store is the part of the state table a pass uses; *state.Store satisfies it.
type Store interface {
	provisioning.ConfigReader
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (state.Lease, error)
	ReleaseLease(ctx context.Context, l state.Lease) error
	ListClaims(ctx context.Context) ([]state.Claim, error)
	// ClaimsInLifecycle lists the claims in one state from an index (eventually consistent); a pass
	// between sweeps reads only the joining ones with it.
	ClaimsInLifecycle(ctx context.Context, l state.Lifecycle) ([]state.Claim, error)
	CreateClaim(ctx context.Context, c state.Claim) (state.Claim, error)
	GetClaim(ctx context.Context, name string) (state.Claim, error)
	UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error)
	// PutClaim writes c if the stored claim is still old (its version); state.ErrConflict if not.
	PutClaim(ctx context.Context, old, c state.Claim) (state.Claim, error)
	RecordDecision(ctx context.Context, d state.Decision) error
	// The absences of NodePools and the disruption ledger pace the removal of a missing NodePool's nodes.
	NotePoolAbsent(ctx context.Context, nodePool string, at time.Time) (state.PoolAbsence, error)
	PoolAbsences(ctx context.Context) ([]state.PoolAbsence, error)
	ClearPoolAbsence(ctx context.Context, nodePool string) error
	ReserveDisruption(ctx context.Context, nodePool, claim string, allowed int) error
}

// NodeLister lists the cluster's Nodes in one call; a clientset's CoreV1().Nodes() satisfies it.
type NodeLister interface {
	List(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error)
}

// NodeWriter changes Nodes; *kube.Actions satisfies it. Every method is idempotent. It cannot delete a
// Node: only the termination flow does, once the instance is gone.
type NodeWriter interface {
	Taint(ctx context.Context, node string, taint corev1.Taint) error
	Untaint(ctx context.Context, node string, taint corev1.Taint) error
	Label(ctx context.Context, node string, labels map[string]*string) error
	Annotate(ctx context.Context, node string, annotations map[string]string) error
	AddFinalizer(ctx context.Context, node, finalizer string) error
	RemoveFinalizer(ctx context.Context, node, finalizer string) error
}

// Instances reads the cluster's own instances; *instance.Launcher satisfies it. List returns every live
// instance tagged nodewright.sh/cluster=<cluster>; LiveByID returns those of ids that are live, asking EC2
// by id. The lifecycle terminates nothing: the termination flow does.
type Instances interface {
	List(ctx context.Context) ([]instance.Instance, error)
	LiveByID(ctx context.Context, ids []string) ([]instance.Instance, error)
}

// Terminations hands a claim to the termination flow (taint, drain, terminate, delete the Node);
// *termination.Sender satisfies it. The lifecycle never drains or terminates a registered node itself.
type Terminations interface {
	Send(ctx context.Context, req termination.Request) error
}

// EventPublisher publishes Kubernetes Events, best effort; *kube.Recorder satisfies it.
type EventPublisher interface {
	Publish(ctx context.Context, e kube.Event) (bool, error)
}

var (
	_ Store          = (*state.Store)(nil)
	_ NodeWriter     = (*kube.Actions)(nil)
	_ Instances      = (*instance.Launcher)(nil)
	_ EventPublisher = (*kube.Recorder)(nil)
	_ Terminations   = (*termination.Sender)(nil)
)

// RunnerConfig is the runner's fixed settings; zero fields take the defaults.
type RunnerConfig struct {
	// LeaseTTL bounds a pass that dies holding the lease when its context has no deadline; a pass with a
	// deadline (every Lambda invocation) holds it until then and no longer (state.LeaseTTLFor).
	LeaseTTL time.Duration
	// SettleMargin: see DefaultSettleMargin.
	SettleMargin time.Duration
	// SweepEvery is how often a pass sweeps (zero: every pass): lists the cluster's instances by tag and
	// every live claim, and decides everything. The passes in between read only the joining claims and
	// register and initialize their Nodes; the hand-overs, the finalizer upkeep, the NodePool usage and
	// the repairs (leaked instances, adoption, ghost claims, released Nodes, housekeeping) wait for the
	// next sweep. At 5,000 nodes a tag-filtered DescribeInstances is several pages of a thousand
	// instances and the claim list thousands of items: a pass every few seconds while Nodes join must not
	// read them every time. DefaultSweepEvery is the lifecycle function's.
	SweepEvery time.Duration
	// DeferMargin: see DefaultDeferMargin.
	DeferMargin time.Duration
	// Workers: see DefaultWorkers.
	Workers int
}

// RunnerDeps are the adapters a pass goes through. With a clientset c they are, as functions/lifecycle
// wires them: Store *state.Store, Nodes c.CoreV1().Nodes(), NodeActions kube.NewActions(c), Instances
// *instance.Launcher, Events *kube.Recorder, Terminations *termination.Sender, Templates
// *launchtemplate.Provider, Profiles *nodeclass.Profiles, Namer *instance.Launcher, Memory *state.Store,
// Now time.Now.
type RunnerDeps struct {
	Store       Store
	Nodes       NodeLister
	NodeActions NodeWriter
	Instances   Instances
	Events      EventPublisher
	// Terminations receives the claims whose nodes must go through the drain.
	Terminations Terminations
	// Templates and Profiles delete the launch templates and instance profiles no claim uses any more
	// (see houseKeep); nil skips that part.
	Templates UnusedTemplates
	Profiles  UnusedProfiles
	// Prices prices an adopted instance (the launch that would have recorded its price was cut short);
	// nil leaves an adopted claim's price unknown (0).
	Prices Prices
	// GoneReasons and Unavailable find launched claims whose instance EC2 terminated while launching it,
	// keep their offerings out of the solves and count the failure against the claim's EC2NodeClass
	// (see recordDiedAtLaunch); nil skips that part.
	GoneReasons GoneReasons
	Unavailable LaunchFailures
	// Namer gives the instances of registered claims the Name tag (see nameInstances); nil skips that part.
	Namer InstanceNamer
	// Memory keeps the memory capacity registered Nodes report per instance type and AMI (see
	// recordMemory); nil skips that part.
	Memory MemoryRecorder
	// Health lists the instances whose EC2 status checks are impaired, for node repair (noderepair.go);
	// nil leaves node repair to the Node conditions.
	Health InstanceHealth
	// Mirrors writes the NodeClaim mirrors (nodewright.sh/v1) after each pass (see writeMirrors); nil
	// skips that part.
	Mirrors MirrorWriter
	Now     func() time.Time
}

// Prices is the hourly price of an offering; *pricing.Provider is one.
type Prices interface {
	Price(instanceType, zone, capacityType string) (float64, bool)
}

// Runner brings launched claims' Nodes into the cluster (registration, initialization), hands the claims
// of deleted Nodes, removed NodePools and stalled drains to the termination flow, and repairs what events
// missed (reconcile.Decide). It is safe for concurrent use; the lease lets one pass proceed at a
// time, across processes.
type Runner struct {
	cfg  RunnerConfig
	deps RunnerDeps
	// lastSweep is when a pass last listed the instances whole (UnixNano; 0: never).
	lastSweep atomic.Int64
	// passes measures how long this process's passes take (see timeForAnotherPass).
	passes runbudget.Meter
	// memory is what this process knows of the observed memory stored (see recordMemory).
	memory memoryMemo
	// repair is what node repair keeps between passes (noderepair.go).
	repair repairMemory
}

// NewRunner returns a runner.
func NewRunner(cfg RunnerConfig, deps RunnerDeps) *Runner {
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.SettleMargin <= 0 {
		cfg.SettleMargin = DefaultSettleMargin
	}
	if cfg.DeferMargin <= 0 {
		cfg.DeferMargin = DefaultDeferMargin
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Runner{cfg: cfg, deps: deps}
}

// Run is one pass under the lifecycle lease, held as runID. When another holder has the lease it returns
// at once with RunReport.Lease false and no error. The error is for anything that kept the pass from
// reading its inputs whole: then nothing destructive was decided (DESIGN decision 6); problems with
// single items are in RunReport.Errors.
func (r *Runner) Run(ctx context.Context, runID string) (RunReport, error) {
	return r.underLease(ctx, runID, func(rep *RunReport) error {
		return r.pass(ctx, runID, rep)
	})
}

// RunUntilSettled holds the lease and makes passes every `every` while a Node is joining (a claim is
// pending, launched or registered) and, after `every`, the time left before the context's deadline still
// covers a pass (timeForAnotherPass); so a short schedule still registers Nodes within seconds of their joining. Without a
// deadline it makes one pass. The report adds up the passes; the first failing pass ends the loop.
func (r *Runner) RunUntilSettled(ctx context.Context, runID string, every time.Duration) (RunReport, error) {
	if every <= 0 {
		return RunReport{}, fmt.Errorf("lifecycle run: every must be positive, got %s", every)
	}
	return r.underLease(ctx, runID, func(rep *RunReport) error {
		for {
			var one RunReport
			began := r.deps.Now()
			err := r.pass(ctx, runID, &one)
			r.passes.Observe(r.deps.Now().Sub(began))
			rep.add(one)
			if err != nil || one.Joining == 0 {
				return err
			}
			if _, ok := ctx.Deadline(); !ok || !r.timeForAnotherPass(ctx, every) {
				return nil
			}
			t := time.NewTimer(every)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	})
}

// timeForAnotherPass reports whether, after waiting every, the time left still covers a pass as this
// process last measured one, with headroom, and never less than SettleMargin (a pass is measured before
// this is asked, so SettleMargin is also the cold estimate). At 5,000 nodes a pass can outlast a fixed
// margin sized on a sandbox cluster.
func (r *Runner) timeForAnotherPass(ctx context.Context, every time.Duration) bool {
	return r.passes.Fits(ctx, r.deps.Now().Add(every), r.cfg.SettleMargin, r.cfg.SettleMargin)
}

// underLease runs body holding the lease, and releases it on every way out of body, a panic included
// (returned as an error).
func (r *Runner) underLease(ctx context.Context, runID string, body func(*RunReport) error) (RunReport, error) {
	if runID == "" {
		return RunReport{}, errors.New("lifecycle run: a run id is required to hold the lease")
	}
	var rep RunReport
	run, err := state.RunLeased(ctx, r.deps.Store, LeaseName, runID, "the lifecycle lease",
		state.LeaseTTLFor(ctx, r.deps.Now(), r.cfg.LeaseTTL), func() error {
			rep.Lease = true
			return body(&rep)
		})
	if !run.Held {
		return RunReport{}, err
	}
	rep.LeaseNotReleased = run.ReleaseWarning()
	return rep, err
}

// pass reads the world, registers and initializes Nodes, then, on a sweep, keeps finalizers, hands over,
// repairs and deletes the launch templates and instance profiles nothing uses any more. Registration and
// initialization only need the joining claims, configuration and Nodes, so they go ahead when the
// instance list fails, and between sweeps; the repairs, which terminate and delete, do not.
func (r *Runner) pass(ctx context.Context, runID string, rep *RunReport) error {
	rep.Passes++
	now := r.deps.Now()
	sweep := r.cfg.SweepEvery <= 0 || now.Sub(time.Unix(0, r.lastSweep.Load())) >= r.cfg.SweepEvery
	w, instErr := r.read(ctx, sweep)
	if w == nil {
		return instErr
	}
	rep.Errors = append(rep.Errors, w.problems...)
	p := &passState{r: r, runID: runID, rep: rep, w: w, lifecycle: map[string]state.Lifecycle{},
		sent: map[string]bool{}, finalized: map[string]bool{}, deferred: map[string]bool{}}
	for _, c := range w.claims {
		p.lifecycle[c.Name] = c.Lifecycle
	}
	// Whatever way the pass ends, the mirrors show the claims as it left them.
	defer p.writeMirrors(ctx, sweep)
	p.register(ctx)
	p.initialize(ctx)
	p.recordMemory(ctx)
	if !sweep {
		rep.Skipped = fmt.Sprintf("hand-overs and repairs: the pass sweeps every %s; between sweeps it reads only the joining claims", r.cfg.SweepEvery)
		rep.Joining = p.joining()
		return nil
	}
	p.keepFinalizers(ctx)
	rep.Usage = Usage(w.nodes, w.claims, w.pools)
	rep.Offerings = OfferingsInUse(w.claims, r.deps.Prices)
	if p.late(ctx) {
		// Registration and initialization left work for the next pass, or nearly used up the time; what
		// remains is decided by the next pass on a fresh read, rather than cut off here half-way.
		rep.Skipped = fmt.Sprintf("hand-overs and repairs: the pass came within %s of its deadline; the next pass decides them", r.cfg.DeferMargin)
		rep.Joining = p.joining()
		return instErr
	}
	// Hand-overs to the termination flow need claims, configuration and Nodes, not the instance list: the
	// termination flow itself checks the instance before it terminates.
	p.handOverDeletedNodes(ctx)
	p.handOverRemovedPools(ctx)
	p.resendStalled(ctx)
	if instErr != nil {
		rep.Skipped = "repairs: the instance list could not be read; nothing is decided on partial data"
		rep.Joining = p.joining()
		return instErr
	}
	r.lastSweep.Store(now.UnixNano())
	p.repair(ctx)
	p.repairNodes(ctx)
	p.releaseDeletedNodes(ctx)
	p.houseKeep(ctx)
	p.nameInstances(ctx)
	rep.Joining = p.joining()
	return nil
}

// passState is one pass's inputs and what it has done so far. While registration, initialization and the
// finalizer upkeep run on workers (paced), mu guards rep, lifecycle, finalized and deferred; the phases after them
// run on the pass's own goroutine once the workers are done.
type passState struct {
	r     *Runner
	runID string
	rep   *RunReport
	w     *world
	mu    sync.Mutex
	// lifecycle is each claim's state as this pass left it.
	lifecycle map[string]state.Lifecycle
	// sent are the claims this pass handed to the termination flow.
	sent map[string]bool
	// finalized are the Nodes this pass gave Nodewright's finalizer.
	finalized map[string]bool
	// deferred are the claims whose work this pass left to the next one (its deadline was near).
	deferred map[string]bool
}

// joining counts the claims whose Node is still on its way (pending, launched or registered).
func (p *passState) joining() int {
	n := 0
	for _, l := range p.lifecycle {
		if l == state.Pending || l == state.Launched || l == state.Registered {
			n++
		}
	}
	return n
}

// decide records a decision; a failed write goes into the report and undoes nothing.
func (p *passState) decide(ctx context.Context, subject, kind, reason, message string, details map[string]string) {
	err := p.r.deps.Store.RecordDecision(ctx, state.Decision{Subject: subject, ID: p.runID + "-" + kind,
		Kind: kind, Reason: reason, Message: message, Details: details, At: p.r.deps.Now().UTC()})
	if err != nil {
		p.fail(subject, fmt.Errorf("recording %s decision: %w", kind, err))
	}
}

// event publishes an Event on a Node; Events are best effort, a failure only goes into the report.
func (p *passState) event(ctx context.Context, n *corev1.Node, typ string, reason kube.Reason, msg string) {
	if p.r.deps.Events == nil {
		return
	}
	if _, err := p.r.deps.Events.Publish(ctx, kube.Event{Object: kube.NodeObject(n), Type: typ, Reason: reason, Message: msg}); err != nil {
		p.fail("node/"+n.Name, err)
	}
}

func (p *passState) fail(item string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rep.Errors = append(p.rep.Errors, item+": "+err.Error())
}
