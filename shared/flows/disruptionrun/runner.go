package disruptionrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/runbudget"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/driftinput"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// LeaseName is the state-table lease that lets one disruption run at a time proceed per cluster.
const LeaseName = "disruption"

// Defaults of Config.
const (
	DefaultLeaseTTL = 2 * time.Minute
	// DefaultValidationDelay is how long a decision waits before it is re-checked on a fresh snapshot
	// (Karpenter waits 15 s, so pods that were on their way have landed).
	DefaultValidationDelay = 15 * time.Second
	// DefaultReplacementTimeout is how long a command waits for its replacements to initialize before
	// it is rolled back (Karpenter's clamp).
	DefaultReplacementTimeout = 10 * time.Minute
	// DefaultCommandMargin is the time a new command needs before the deadline, on top of the
	// validation delay: a fresh snapshot, the ledger, taints, claim records and a launch.
	DefaultCommandMargin = 25 * time.Second
	// DefaultKeptEvery is how often a node kept for the same reason is recorded again (decision record
	// and Unconsolidatable event); a change of reason is recorded at once.
	DefaultKeptEvery = 10 * time.Minute
	// DefaultMaxCommands bounds the commands one run executes.
	DefaultMaxCommands = 10
	// DefaultColdCommandEstimate is how long deciding and validating a command is assumed to take before
	// this process measured one (see timeForCommand): the disruption decision's target at the largest
	// tier (60 s at 150,000 pods, issue #23).
	DefaultColdCommandEstimate = 60 * time.Second
)

// Termination reasons this package sends besides the commands' own (Empty, Underutilized).
const (
	// ReasonRolledBack is the termination reason of a replacement whose command was called off.
	ReasonRolledBack = "ConsolidationRolledBack"
)

// Store is the part of the state table a disruption run uses; *state.Store satisfies it.
type Store interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (state.Lease, error)
	ReleaseLease(ctx context.Context, l state.Lease) error
	ListConfig(ctx context.Context, kind string) ([]state.ConfigItem, error)
	ListClaims(ctx context.Context) ([]state.Claim, error)
	// GetClaim reads one claim; state.ErrNotFound when there is none.
	GetClaim(ctx context.Context, name string) (state.Claim, error)
	ListDisruptionCommands(ctx context.Context) ([]state.DisruptionCommand, error)
	CreateDisruptionCommand(ctx context.Context, c state.DisruptionCommand) (state.DisruptionCommand, error)
	PutDisruptionCommand(ctx context.Context, c state.DisruptionCommand) (state.DisruptionCommand, error)
	ReserveDisruption(ctx context.Context, nodePool, claim string, allowed int) error
	ReleaseDisruption(ctx context.Context, nodePool, claim string) error
	DisruptionReservations(ctx context.Context, nodePool string) ([]state.DisruptionReservation, error)
	RecordDecisions(ctx context.Context, ds []state.Decision) error
	UpdateClaim(ctx context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error)
}

var _ Store = (*state.Store)(nil)

// Launcher prepares launches the way a provisioning run does; ProvisionerLauncher adapts a
// *provisioning.Provisioner.
type Launcher interface {
	// PrepareLaunches reads configuration, catalog, prices, node classes and unavailable offerings; an
	// error means a decision would be made on incomplete data.
	PrepareLaunches(ctx context.Context) (Launches, error)
	// ClaimName draws a fresh claim name for a NodePool.
	ClaimName(nodePool string) string
}

// Launches is one run's view of what can launch, and the launch itself.
type Launches interface {
	// NodePools are the pools that can launch, each with its instance types.
	NodePools() []scheduling.NodePool
	Unavailable() scheduling.UnavailableOfferings
	// Problems are configuration items or pools left out (not an error: the rest is complete).
	Problems() []string
	InFlight(claims []state.Claim, snap *kube.Snapshot) []scheduling.InFlightClaim
	// Record writes the pending record of one claim named name (another name when it is taken)
	// replacing the claims in replaces; provisioning counts it in flight from then on.
	Record(ctx context.Context, cp scheduling.ClaimPlan, name string, replaces []string) (PendingLaunch, error)
	// Drift judges a claim against its NodePool and EC2NodeClass as configured and resolved for this
	// run (no call to AWS); Lifetime is what its expiry is judged from.
	Drift(c state.Claim, obs driftinput.Observed) drift.Result
	Lifetime(c state.Claim) drift.Lifetime
	// ClassBackoff says whether the EC2NodeClass of nodePool is backing off at now because its
	// instances died at launch (see provisioning.Launches.ClassBackoff).
	ClassBackoff(nodePool string, claims []state.Claim, now time.Time) (state.ClassBackoff, bool)
	// Settings are the deployment's settings read with the configuration: the SpotToSpotConsolidation
	// gate and the minValues and preference policies the engine decides with.
	Settings() settings.Settings
	// Reservations are the capacity reservations this run's EC2NodeClass resolutions found usable, by
	// id (no call to AWS); OnDemandPrice prices an instance type on demand as launches do.
	Reservations() map[string]apis.CapacityReservationStatus
	OnDemandPrice(instanceType string) (float64, bool)
	// StaticReplacement plans the one claim that replaces a drifted node of static NodePool pool (see
	// provisioning.Launches.StaticReplacement); base carries the cluster's daemon sets and policies.
	StaticReplacement(pool string, base scheduling.Input) (scheduling.ClaimPlan, error)
}

// PendingLaunch is a recorded claim not launched yet.
type PendingLaunch interface {
	// Name is the name the claim was recorded under.
	Name() string
	// Launch launches it; see provisioning.PendingLaunch.Launch for the outcomes.
	Launch(ctx context.Context) (*provisioning.LaunchedClaim, error)
}

// ClusterReader reads the whole cluster at once; *kube.Snapshotter satisfies it.
type ClusterReader interface {
	Snapshot(ctx context.Context) (*kube.Snapshot, error)
}

// NodeActions taints, untaints and relabels Nodes; *kube.Actions satisfies it.
type NodeActions interface {
	Taint(ctx context.Context, node string, taint corev1.Taint) error
	Untaint(ctx context.Context, node string, taint corev1.Taint) error
	// Label sets labels on the Node; a nil value removes the label.
	Label(ctx context.Context, node string, labels map[string]*string) error
}

// Terminations hands claims to the termination flow; *termination.Sender satisfies it.
type Terminations interface {
	Send(ctx context.Context, req termination.Request) error
}

// Events publishes Kubernetes Events (best effort); *kube.Recorder satisfies it.
type Events interface {
	Publish(ctx context.Context, e kube.Event) (bool, error)
}

var (
	_ ClusterReader = (*kube.Snapshotter)(nil)
	_ NodeActions   = (*kube.Actions)(nil)
	_ Terminations  = (*termination.Sender)(nil)
	_ Events        = (*kube.Recorder)(nil)
)

// Config is the runner's fixed settings; zero values take the defaults.
type Config struct {
	// LeaseTTL bounds a run that dies holding the lease when its context has no deadline; a run with a
	// deadline (every Lambda invocation) holds it until then and no longer (state.LeaseTTLFor).
	LeaseTTL time.Duration
	// ValidationDelay is the wait between a decision and its re-check on a fresh snapshot; negative
	// means none (tests).
	ValidationDelay    time.Duration
	ReplacementTimeout time.Duration
	CommandMargin      time.Duration
	KeptEvery          time.Duration
	MaxCommands        int
	// ColdCommandEstimate: see DefaultColdCommandEstimate.
	ColdCommandEstimate time.Duration
}

// Deps are the adapters a run goes through. All are required except Events (nil: none published) and
// Reservations (nil: a node whose capacity reservation no EC2NodeClass selects any more is left as it is;
// see endReservations).
type Deps struct {
	Store        Store
	Cluster      ClusterReader
	Launcher     Launcher
	Nodes        NodeActions
	Terminations Terminations
	Events       Events
	Reservations ReservationLookup
	// Buffers reads the cluster's CapacityBuffers when the CapacityBuffer gate is on (buffers.go); nil
	// reads none.
	Buffers capacitybuffer.Cluster
	// Mirrors writes the NodePool and EC2NodeClass mirrors once a run, from its first complete read
	// (mirrors.go); nil writes none.
	Mirrors MirrorStatus
	// ClaimMirrors writes the NodeClaim mirrors of the claims a run changed, after the run
	// (claimmirrors.go); nil writes none.
	ClaimMirrors ClaimMirrors
	Now          func() time.Time
}

// Runner runs consolidation: advances the commands in progress, then decides, validates and executes
// new ones. Safe for concurrent use; the lease lets one run at a time proceed, across processes.
type Runner struct {
	cfg  Config
	deps Deps

	mu sync.Mutex
	// kept remembers what was recorded lately about each kept node (see DefaultKeptEvery).
	kept map[string]keptMemo
	// candidates remembers the ConsolidationCandidate Event last published on each node (see
	// announceCandidates); scored the Balanced policy's Event (see publishScores).
	candidates map[string]keptMemo
	scored     map[string]keptMemo
	// protections remembers the do-not-disrupt Event last published on each pod (see doNotDisruptEvents).
	protections map[types.UID]string
	// pods remembers each node's pods as last seen, to date pod removals (see podEvents).
	pods podEvents
	// commands measures how long deciding and validating a command takes in this process (see
	// timeForCommand).
	commands runbudget.Meter
	// ended are the capacity reservations a lookup found ended (see rememberEnded).
	ended map[string]reservationFact
	// buffers are the CapacityBuffers last read (see readBuffers).
	buffers bufferRead
}

// New returns a runner; zero values in cfg take their defaults.
func New(cfg Config, deps Deps) *Runner {
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.ValidationDelay == 0 {
		cfg.ValidationDelay = DefaultValidationDelay
	}
	if cfg.ValidationDelay < 0 {
		cfg.ValidationDelay = 0
	}
	if cfg.ReplacementTimeout <= 0 {
		cfg.ReplacementTimeout = DefaultReplacementTimeout
	}
	if cfg.CommandMargin <= 0 {
		cfg.CommandMargin = DefaultCommandMargin
	}
	if cfg.KeptEvery <= 0 {
		cfg.KeptEvery = DefaultKeptEvery
	}
	if cfg.MaxCommands <= 0 {
		cfg.MaxCommands = DefaultMaxCommands
	}
	if cfg.ColdCommandEstimate <= 0 {
		cfg.ColdCommandEstimate = DefaultColdCommandEstimate
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Runner{cfg: cfg, deps: deps, kept: map[string]keptMemo{}, candidates: map[string]keptMemo{}, scored: map[string]keptMemo{}, pods: podEvents{seen: map[string]podMemo{}}}
}

// Report is what one run did, for the handler's log line, metrics and tests.
type Report struct {
	// Lease is false when another run held the lease: this run did nothing.
	Lease bool
	// LeaseNotReleased is why the run could not give its lease back at the end (empty when it did): a
	// warning, not a failure — the lease ends by itself at the invocation's deadline (state.LeasedRun).
	LeaseNotReleased string
	// Advanced are what became of commands in progress: "cmd-1: terminating", "cmd-2: rolled back (...)".
	Advanced []string
	// TaintsLifted names Nodes whose stale karpenter.sh/disrupted taint was lifted.
	TaintsLifted []string
	// Commands are the commands this run executed.
	Commands []disruption.Command
	// Rejected are decided commands that were not executed, and why (validation, budget ledger);
	// FailedValidations counts those that failed validation.
	Rejected          []string
	FailedValidations int
	// RolledBack counts the commands this run called off; HandedOver the disrupted claims it sent to
	// the termination flow, per NodePool and reason ("pool/reason").
	RolledBack int
	HandedOver map[string]int
	// Skipped says why nothing was decided (incomplete data, deadline).
	Skipped string
	// EligibleNodes are the Nodewright nodes of the last decision that were not kept (candidates the
	// engine could act on), per NodePool.
	EligibleNodes map[string]int
	// Allowed is the budget's allowance per NodePool and reason at the last decision.
	Allowed map[string]map[disruption.Reason]int
	// BudgetBlocked counts, per NodePool, the candidates of the last decision that only the pool's
	// disruption budget kept.
	BudgetBlocked map[string]int
	// Drifted counts the drifted nodes of the first read per "pool/reason" (the Drifted condition's
	// reason); Expired the expired nodes per pool; Restamped the claims whose hashes were re-stamped
	// after a hash-version change.
	Drifted   map[string]int
	Expired   map[string]int
	Restamped int
	// BlockDrains counts the claims handed to the termination flow because their capacity block ends;
	// Demoted the reserved claims made on-demand because their reservation ended; Relabelled the Nodes
	// whose capacity-type and reservation labels were brought in line with such a claim.
	BlockDrains, Demoted, Relabelled int
	// StaticScaleDown has a line per static NodePool above its replicas: its count and what this run
	// removed, or what held the removal back (staticscaledown.go).
	StaticScaleDown []string
	// StaticDrift has a line per static NodePool with drifted nodes: how many this run replaced 1:1, or
	// what held them (staticdrift.go).
	StaticDrift []string
	// Scores are the moves the Balanced policy scored in the run's decisions, approved (a command's) or
	// rejected, at most MaxReportedScores; ScoreEvents counts the ConsolidationApproved and
	// ConsolidationRejected Events they led to (at most MaxScoreEvents).
	Scores      []disruption.ScoredMove
	ScoreEvents int
	// MirrorsWritten and MirrorsDeleted count the NodePool and EC2NodeClass mirrors written and deleted;
	// MirrorEvents the Events published on them (NodeClassNotReady...).
	MirrorsWritten, MirrorsDeleted, MirrorEvents int
	// ClaimEvents counts the disruption Events (DisruptionLaunching, DisruptionWaitingReadiness,
	// DisruptionTerminating, DisruptionBlocked) handed to the publisher for NodeClaim mirrors, at most
	// MaxClaimEvents a run (claimevents.go).
	ClaimEvents int
	// UnconsolidatableClaimEvents counts the Unconsolidatable Events handed to the publisher for
	// NodeClaim mirrors, at most MaxClaimEvents a run (explain.go).
	UnconsolidatableClaimEvents int
	// Evaluation is the time the engine took, summed over the run's decisions.
	Evaluation time.Duration
	// ClaimMirrorsWritten counts the NodeClaim mirrors of claims the run changed that it wrote;
	// ClaimMirrorsLeft those its bounds left to the lifecycle function's next sweep.
	ClaimMirrorsWritten, ClaimMirrorsLeft int
	// ConsolidatableMarks counts the claims whose Consolidatable mark the run set or cleared;
	// ConsolidatableLeft the changes beyond MaxConsolidatableMarksPerRun, left to the next runs.
	ConsolidatableMarks, ConsolidatableLeft int
	// Errors are problems that did not stop the run.
	Errors []string

	followed followed
}

// Run is one disruption run, holding the lease as runID. When another run holds the lease it returns at
// once with Report.Lease false and no error. The error is for what keeps the run from working at all
// (the lease, the state table); a run that cannot read a complete snapshot decides nothing and says why
// in Report.Skipped.
func (r *Runner) Run(ctx context.Context, runID string) (Report, error) {
	if runID == "" {
		return Report{}, errors.New("disruption run: a run id is required to hold the lease")
	}
	var rep Report
	run, err := state.RunLeased(ctx, r.deps.Store, LeaseName, runID, "the disruption lease",
		state.LeaseTTLFor(ctx, r.deps.Now(), r.cfg.LeaseTTL), func() error {
			rep.Lease = true
			return r.run(ctx, runID, &rep)
		})
	if !run.Held {
		return Report{}, err
	}
	rep.LeaseNotReleased = run.ReleaseWarning()
	r.followMirrors(ctx, &rep)
	return rep, err
}

// run reads the cluster whole once: advance and the first decision share that snapshot. Every later
// read of the run (a validation, the next command's decision) brings the Snapshotter's views forward
// and rebuilds the engine's input only where the cluster or the state changed (see read). A taint that
// advance lifts (or a command it rolls back) still shows in the shared snapshot: those nodes count as
// disrupting for the first decision, which can only make it more cautious, and the validation sees them
// as they are.
func (r *Runner) run(ctx context.Context, runID string, rep *Report) error {
	// The first command is measured from the run's whole read, which it shares: a later command's
	// catch-up reads take less, so the measure errs on the long side.
	began := r.deps.Now()
	snap, err := r.deps.Cluster.Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("reading the cluster: %w", err)
	}
	if err := r.advance(ctx, snap, rep); err != nil {
		return err
	}
	var last *world // the run's latest read, which the next one brings forward
	for i := 1; i <= r.cfg.MaxCommands; i++ {
		if !r.timeForCommand(ctx) {
			if i == 1 {
				rep.Skipped = "too close to the deadline to decide and validate a command"
			}
			return nil
		}
		if last != nil {
			began = r.deps.Now()
		}
		var w *world
		if last == nil {
			w = r.read(ctx, snap, nil)
			snap = nil // only the first decision shares advance's snapshot
		} else {
			w = r.read(ctx, nil, last)
		}
		last = w
		rep.Errors = append(rep.Errors, w.problems...)
		if i == 1 && w.input.Incomplete == "" && r.endReservations(ctx, w, rep) {
			// Claims and Nodes changed: the decision reads them as they are now (a catch-up read).
			w = r.read(ctx, nil, w)
			last = w
		}
		if i == 1 && w.input.Incomplete == "" {
			down := r.scaleDownStatic(ctx, runID, w, rep)
			if down {
				// The static pools' surplus is tainted and handed over: what follows sees it disrupting.
				w = r.read(ctx, nil, w)
				last = w
			}
			if w.input.Incomplete == "" && r.driftStatic(ctx, runID, w, rep) {
				w = r.read(ctx, nil, w)
				last = w
			}
		}
		if _, ok := ctx.Deadline(); ok {
			// The search stops with its best command so far while a validation and an execution still fit.
			w.input.Options.TimeLeft = func() bool { return r.timeFor(ctx, r.cfg.ValidationDelay+r.cfg.CommandMargin) }
		}
		if i == 1 {
			r.blockedPools(ctx, w, rep)
			if w.input.Incomplete == "" {
				r.recordDrift(ctx, w, rep)
				r.clearStaleMarks(ctx, w, rep)
				r.recordConsolidatable(ctx, w, rep)
				r.followEarly(ctx, rep)
				r.writeMirrors(ctx, w, rep)
				r.requestedWithoutNode(ctx, w, rep)
				r.doNotDisruptEvents(ctx, w, rep)
			}
		}
		start := time.Now()
		res := disruption.Decide(w.input)
		rep.Evaluation += time.Since(start)
		r.noteEligibility(w, res, rep)
		if res.Skipped != "" {
			rep.Skipped = res.Skipped
			return nil
		}
		r.recordKept(ctx, w, res.Kept, rep)
		r.publishScores(ctx, res, rep)
		if len(res.Commands) == 0 {
			return nil
		}
		cmd := res.Commands[0]
		r.announceCandidates(ctx, cmd, rep)
		if !r.sleep(ctx, r.cfg.ValidationDelay) {
			return nil
		}
		fresh := r.read(ctx, nil, w)
		last = fresh
		r.commands.Observe(r.deps.Now().Sub(began))
		if verr := disruption.Validate(cmd, fresh.input); verr != nil {
			rep.FailedValidations++
			r.rejected(ctx, cmd, stageValidation, verr.Error(), rep)
			return nil
		}
		cmd, ok := r.heldBack(ctx, cmd, fresh, rep)
		if !ok {
			return nil
		}
		id := fmt.Sprintf("%s-%d", runID, i)
		if !r.execute(ctx, id, cmd, fresh, rep) {
			return nil
		}
	}
	return nil
}

// timeForCommand reports whether another command may start: the time left covers deciding and
// validating one as this process last measured it (a read, the search, the validation delay and the
// re-read), with headroom, and never less than ValidationDelay + CommandMargin. A cold process assumes
// ColdCommandEstimate. At 150,000 pods a command's two whole-cluster reads alone can outlast a fixed
// margin sized on a sandbox cluster.
func (r *Runner) timeForCommand(ctx context.Context) bool {
	return r.commands.Fits(ctx, r.deps.Now(), r.cfg.ColdCommandEstimate, r.cfg.ValidationDelay+r.cfg.CommandMargin)
}

// timeFor reports whether at least d is left before the context's deadline.
func (r *Runner) timeFor(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || deadline.Sub(r.deps.Now()) >= d
}

// sleep waits d unless the context ends first; it reports whether the wait completed.
func (r *Runner) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// noteEligibility fills the report's eligible nodes and allowances from a decision.
func (r *Runner) noteEligibility(w *world, res disruption.Result, rep *Report) {
	rep.Allowed = w.allowed
	kept := map[string]bool{}
	rep.BudgetBlocked = map[string]int{}
	for _, k := range res.Kept {
		kept[k.Node] = true
		if k.BudgetBlocked {
			rep.BudgetBlocked[k.NodePool]++
		}
	}
	rep.EligibleNodes = map[string]int{}
	for _, n := range w.input.Nodes {
		if n.NodePool != "" && !kept[n.Name()] {
			rep.EligibleNodes[n.NodePool]++
		}
	}
}
