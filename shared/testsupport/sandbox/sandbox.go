package sandbox

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
	"github.com/nodewright/nodewright/shared/flows/podwebhook"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/faults"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// Options configure a sandbox; zero fields take the defaults.
type Options struct {
	// Out receives the timeline (default io.Discard); Log the functions' JSON logs (default io.Discard).
	Out, Log io.Writer
	// Config is the NodePools and EC2NodeClasses (default SampleConfig).
	Config string
	// BootDelay is how long an instance runs before its Node joins (default 3 s; EC2 takes 30–60 s).
	BootDelay time.Duration
	// LifecycleEvery is the lifecycle function's pace while Nodes join (default 2 s); LifecycleSweepEvery
	// how often its pass lists the instances by tag, reads every claim and decides the hand-overs and
	// repairs, the passes in between only registering and initializing (default 10 s: moto's
	// tag-filtered DescribeInstances takes seconds at a few hundred instances and serves one request at
	// a time, so a list on every pass would stall the provisioner's launches during a burst).
	LifecycleEvery, LifecycleSweepEvery time.Duration
	// BackstopEvery is the provisioner's backstop schedule (default 1 minute, as deployed).
	BackstopEvery time.Duration
	// FunctionTimeout bounds each invocation (default 60 s, the deployed provisioner's timeout).
	FunctionTimeout time.Duration
	// DisruptionEvery is the disruption function's schedule once StartDisruption deployed it (default
	// DefaultDisruptionEvery; deployed: every minute); DisruptionValidationDelay its wait before a
	// decision is re-checked (default DefaultDisruptionValidationDelay; deployed: 15 s).
	DisruptionEvery, DisruptionValidationDelay time.Duration
	// Faults, when set, is installed on the functions' own AWS and API-server clients (not on the
	// sandbox's set-up, observers and node agent, nor on the event sources' polling); it injects nothing
	// until armed (the chaos scenario arms it).
	Faults *faults.Injector
}

// DeployedLifecycleSweepEvery is the lifecycle function's sweep period as deployed
// (lifecycle.DefaultSweepEvery), for a scenario that measures what does not wait for the sweep.
const DeployedLifecycleSweepEvery = lifecycle.DefaultSweepEvery

func (o *Options) defaults() {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Config == "" {
		o.Config = SampleConfig
	}
	if o.BootDelay <= 0 {
		o.BootDelay = 3 * time.Second
	}
	if o.LifecycleEvery <= 0 {
		o.LifecycleEvery = 2 * time.Second
	}
	if o.LifecycleSweepEvery <= 0 {
		o.LifecycleSweepEvery = 10 * time.Second
	}
	if o.BackstopEvery <= 0 {
		o.BackstopEvery = time.Minute
	}
	if o.FunctionTimeout <= 0 {
		o.FunctionTimeout = time.Minute
	}
	if o.DisruptionEvery <= 0 {
		o.DisruptionEvery = DefaultDisruptionEvery
	}
	if o.DisruptionValidationDelay <= 0 {
		o.DisruptionValidationDelay = DefaultDisruptionValidationDelay
	}
}

// Cluster is the sandbox cluster's name; Table its state table.
const (
	Cluster = "sandbox"
	Table   = "nodewright-sandbox"
)

// ProvisioningPollers is how many provisioning-queue batches the sandbox's event source hands the
// provisioner at once: the deployed event source's maximum concurrency (infra's queuePollers).
const ProvisioningPollers = 2

// Sandbox is a running sandbox. Close stops everything it started.
type Sandbox struct {
	opts Options
	Moto *awstest.Moto
	CP   *kubetest.ControlPlane
	AWS  aws.Config
	// Client is the administrator's. Each function calls the API server as its own identity (see
	// FunctionClient), with only the rights of its footprint ClusterRole, as its EKS access entry gives them.
	Client   kubernetes.Interface
	EC2      *ec2.Client
	SQS      *sqs.Client
	Store    *state.Store
	Queues   Queues
	Timeline *Timeline
	Log      *slog.Logger

	Provisioner  *provisioning.Provisioner
	Lifecycle    *lifecycle.Runner
	Interruption *interruption.Service
	Termination  *termination.Service
	Launcher     *instance.Launcher
	// Disruption is the disruption function's runner, once StartDisruption deployed it.
	Disruption *disruptionrun.Runner

	fleet  *fleetWatch
	hook   *webhook
	agent  *agent
	writes *writeLog // the functions' identities' mutating requests

	clients   map[footprint.Function]kubernetes.Interface // each function's own identity
	configs   map[footprint.Function]*rest.Config         // and its client configuration
	recorders map[footprint.Function]*kube.Recorder

	runCtx context.Context // the functions' lifetime
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	stats     Stats
	errs      []error
	faultErrs []error // errors of injected faults the functions reported
	chaos     bool    // the chaos scenario has the fault layer armed
	// brokenClass: the NodePool BrokenClassName is configured on purpose (the scale-up scenario); the
	// functions' reports that it cannot launch are expected (brokenClassReports counts them), not errors.
	brokenClass        bool
	brokenClassReports int
	disruptionRuns     []DisruptionRun
	// launchedFor is, for each pod a provisioner run launched a claim for, that claim's instance;
	// launchedClaims every claim a provisioner run launched, by instance. coveredBy is, for each pod, the
	// instance of the first claim a run launched for it or placed it on while that claim was in flight,
	// and claimInstance the instance of each claim a run launched, by claim name.
	launchedFor    map[types.UID]string
	launchedClaims map[string]provisioning.LaunchedClaim
	coveredBy      map[types.UID]string
	claimInstance  map[string]string
}

// Stats count what the functions did.
type Stats struct {
	// ProvisionerInvocations, Solves (runs that held the lease and solved) and Coalesced (batches
	// acknowledged without a run, or runs that found the lease held).
	ProvisionerInvocations, Solves, Coalesced int
	// LifecyclePasses counts lifecycle runs that held the lease.
	LifecyclePasses int
	// DisruptionInvocations counts the disruption function's invocations, DisruptionRuns those that held
	// the lease.
	DisruptionInvocations, DisruptionRuns int
	// LeasesNotReleased counts runs that did their work but could not give their lease back in time (a
	// slow table at the very end): warnings, not errors, as the lease ends at the invocation's deadline.
	LeasesNotReleased int
}

// Start brings the sandbox up: moto, the control plane, the AWS resources and configuration, the
// webhook, the functions behind their event sources, and the node agent.
func Start(ctx context.Context, opts Options) (*Sandbox, error) {
	opts.defaults()
	s := &Sandbox{opts: opts, Timeline: NewTimeline(opts.Out), Log: slog.New(slog.NewJSONHandler(opts.Log, nil)), writes: &writeLog{}}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	var err error
	if s.Moto, err = awstest.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting moto: %w", err)
	}
	s.Timeline.Printf("sandbox", "moto (EC2, IAM, SSM, SQS, DynamoDB, Secrets Manager) at %s", s.Moto.Endpoint)
	if s.CP, err = kubetest.Start(ctx, kubetest.Options{Scheduler: true, ControllerManager: true}); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	s.Client = s.CP.Client
	s.Timeline.Printf("sandbox", "control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager) at %s", s.CP.Config.Host)
	// Calls made under a function's label (see awscalls.WithFunction at each function's entry) are
	// recorded for infra's IAM proof when $NODEWRIGHT_AWS_CALLS is set; set-up calls carry no label.
	// As LoadDefaultConfig leaves it in Lambda, no configuration-wide retry limit: each client's own
	// retryer decides (the state table's rides out throttling with 8 attempts, the others take the SDK's 3).
	cfg := s.Moto.Config()
	cfg.RetryMaxAttempts = 0
	s.AWS = awscalls.Instrument(cfg, s.deployment(), "")
	if opts.Faults != nil {
		s.AWS.HTTPClient = opts.Faults.AWSClient(s.AWS.HTTPClient, func(ctx context.Context) bool { return awscalls.FunctionOf(ctx) != "" })
	}
	s.EC2, s.SQS = ec2.NewFromConfig(s.AWS), sqs.NewFromConfig(s.AWS)
	if s.Queues, err = buildAWS(ctx, s.AWS, Cluster, Table, opts.Config); err != nil {
		return nil, err
	}
	// The functions share one store; like the provisioner's, disruption's and lifecycle's mains, it reads
	// claims through a ClaimsView, so a read queries only the shards that changed.
	s.Store = state.New(state.NewClient(s.AWS), Table, state.WithClaimsView())
	if err := s.routeInterruptions(ctx); err != nil {
		return nil, err
	}
	s.Timeline.Printf("sandbox", "EventBridge rules (spot interruption, rebalance, state change, capacity reservation, scheduled change) → interruption queue")
	s.Timeline.Printf("sandbox", "VPC with subnets in %v, node AMI and role, state table with the NodePool configuration, queues", Zones)
	if err := s.wire(ctx); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// wire builds the functions' use cases over moto and the control plane and starts their event sources.
func (s *Sandbox) wire(ctx context.Context) error {
	s.fleet = &fleetWatch{Client: s.EC2, onLaunch: func(l Launch) {
		if s.agent != nil {
			s.agent.track(l.InstanceIDs)
		}
		if l.Err != nil {
			s.Timeline.Printf("ec2", "CreateFleet for %s failed: %v", l.Claim, l.Err)
			return
		}
		s.Timeline.Printf("ec2", "CreateFleet for %s: %s in %s → %v", l.Claim, l.InstanceType, l.Zone, l.InstanceIDs)
	}}
	s.Launcher = instance.New(s.fleet, Cluster)
	if err := s.grantFunctions(ctx); err != nil {
		return err
	}
	if err := s.installMirrors(ctx); err != nil {
		return err
	}
	s.Timeline.Printf("sandbox", "mirror CRDs (nodeclaims, nodepools, ec2nodeclasses.nodewright.sh) and their read-only policy, as `nodewright manifests` prints them")
	lifecycleMirrors, err := s.nodeClaimMirrors(footprint.Lifecycle)
	if err != nil {
		return err
	}
	prices, err := pricing.NewProvider("us-east-1")
	if err != nil {
		return err
	}
	provisionerMirrors, err := s.nodeClaimMirrors(footprint.Provisioner)
	if err != nil {
		return err
	}
	s.Provisioner = s.newProvisioner(footprint.Provisioner, prices, 1, &provisioning.LaunchMirrors{Claims: s.Store, Writer: provisionerMirrors})
	launcher := instance.New(s.EC2, Cluster)
	s.Lifecycle = lifecycle.NewRunner(lifecycle.RunnerConfig{SweepEvery: s.opts.LifecycleSweepEvery}, lifecycle.RunnerDeps{Store: s.Store, Nodes: kube.NewNodeView(s.FunctionClient(footprint.Lifecycle), kube.SnapshotOptions{}),
		NodeActions: kube.NewActions(s.FunctionClient(footprint.Lifecycle)), Instances: launcher, GoneReasons: launcher, Unavailable: s.Store,
		Events: s.claimEvents(footprint.Lifecycle, lifecycleMirrors), Prices: prices,
		Terminations: termination.NewSender(s.SQS, s.Queues.Termination), Namer: launcher, Memory: s.Store, Mirrors: lifecycleMirrors, Now: time.Now})

	start := time.Now()
	catalog, err := s.Provisioner.Catalog(ctx)
	if err != nil {
		return err
	}
	s.Timeline.Printf("sandbox", "instance catalog: %d types in %.1fs (the provisioner's, which the node agent shares)", len(catalog.Types), time.Since(start).Seconds())
	types := map[string]scheduling.InstanceInfo{}
	for _, t := range catalog.Types {
		types[t.Info.Name] = t.Info
	}
	s.agent = &agent{ec2: s.EC2, client: s.Client, types: types, bootDelay: s.opts.BootDelay, tl: s.Timeline,
		onError: s.fail, tracked: map[string]bool{}, seen: map[string]time.Time{}, joined: map[string]string{}, failed: map[string]bool{}, foreign: map[string]bool{}}

	token := "sandbox-" + fmt.Sprint(rand.Uint64())
	tokens, err := webhookTokens(ctx, s.AWS, token, s.Log)
	if err != nil {
		return err
	}
	s.hook = startWebhook(&podwebhook.Intake{Cluster: Cluster, QueueURL: s.Queues.Provisioning, Tokens: tokens,
		Queue: s.SQS, Log: s.Log, Now: time.Now}, token)
	if err := s.hook.register(ctx, s.Client); err != nil {
		return err
	}
	s.Timeline.Printf("sandbox", "pending-pod webhook registered at https://%s/<token> (failurePolicy Ignore)", s.hook.srv.Listener.Addr())

	runCtx, cancel := context.WithCancel(context.Background())
	s.runCtx, s.cancel = runCtx, cancel
	// Lambda's event source polls the provisioning queue with up to ProvisioningPollers batches at once,
	// as infra deploys it: while one invocation holds the lease and launches, the other checks its batch
	// against the last run and takes the lease next.
	for range ProvisioningPollers {
		s.goRun(func() {
			(&eventSource{name: "provisioner", queueURL: s.Queues.Provisioning, sqs: s.SQS, handle: s.provisionerHandler,
				timeout: s.opts.FunctionTimeout, idle: 50 * time.Millisecond, onError: s.fail}).run(runCtx)
		})
	}
	s.goRun(func() { s.every(runCtx, s.opts.BackstopEvery, s.backstop) })
	s.goRun(func() { s.every(runCtx, s.opts.LifecycleEvery, s.lifecyclePass) })
	s.goRun(func() { s.agent.run(runCtx, 250*time.Millisecond) })
	s.startInterruption(runCtx)
	return nil
}

// grantFunctions applies every function's ClusterRole and binding, as `nodewright manifests` prints them,
// and connects as each function's own identity (a user in that function's group, as its EKS access entry
// maps its IAM role), recording every write those identities make. A request a function's code makes
// that its role does not allow fails here as it would in EKS.
func (s *Sandbox) grantFunctions(ctx context.Context) error {
	s.clients = map[footprint.Function]kubernetes.Interface{}
	s.configs = map[footprint.Function]*rest.Config{}
	s.recorders = map[footprint.Function]*kube.Recorder{}
	for _, f := range footprint.Functions() {
		user := functionUser(f)
		if err := footprint.Grant(ctx, s.Client, f, user); err != nil {
			return err
		}
		cfg := s.CP.As(user, f.Group())
		cfg.Wrap(s.writes.wrap)
		if s.opts.Faults != nil { // outermost: a faulted request reaches neither the write log nor the server
			cfg.Wrap(s.opts.Faults.KubeTransport)
		}
		c, err := kube.NewClientset(cfg)
		if err != nil {
			return err
		}
		s.clients[f], s.configs[f] = c, cfg
		s.recorders[f] = kube.NewRecorder(c, kube.RecorderOptions{Instance: string(f)})
	}
	return nil
}

// functionUser is the user name a function's IAM role has in the cluster (an assumed-role session).
func functionUser(f footprint.Function) string {
	return "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-" + string(f) + "/sandbox"
}

// FunctionClient is the client function f calls the API server with: f's own identity, which has only
// the rights of f's ClusterRole.
func (s *Sandbox) FunctionClient(f footprint.Function) kubernetes.Interface { return s.clients[f] }

// deployment is the stack the sandbox stands in for, as infra's IAM proof synthesizes it.
func (s *Sandbox) deployment() awscalls.Deployment {
	q := QueueNames(Cluster)
	return awscalls.Deployment{Cluster: Cluster, Account: awstest.AccountID, Table: Table, Manifests: s.opts.Config,
		Queues: map[string]string{"Provisioning": q.Provisioning, "Interruption": q.Interruption, "Termination": q.Termination,
			"DisruptionWake": q.DisruptionWake}, WebhookSecret: webhookSecretName}
}

func (s *Sandbox) goRun(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// every calls f on a schedule until ctx ends.
func (s *Sandbox) every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ictx, cancel := context.WithTimeout(ctx, s.opts.FunctionTimeout)
			f(ictx)
			cancel()
		}
	}
}

// fail records an error a component hit; scenarios report them and tests fail on them. An error an
// injected fault caused is set apart: the scenario's outcome tells whether the functions recovered.
func (s *Sandbox) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if faults.IsInjected(err) {
		s.faultErrs = append(s.faultErrs, err)
		s.Timeline.Printf("fault", "%v", err)
		return
	}
	if s.brokenClass && isBrokenClassProblem(err) {
		s.brokenClassReports++
		if s.brokenClassReports == 1 {
			s.Timeline.Printf("expected", "%v (the scenario's class with a missing subnet; said again by each run, not repeated here)", err)
		}
		return
	}
	s.errs = append(s.errs, err)
	s.Timeline.Printf("error", "%v", err)
}

// leaseNotReleased notes a run that could not give its lease back (state.LeasedRun.NotReleased).
func (s *Sandbox) leaseNotReleased(function, why string) {
	if why == "" {
		return
	}
	s.mu.Lock()
	s.stats.LeasesNotReleased++
	s.mu.Unlock()
	s.Timeline.Printf("warning", "%s: %s", function, why)
}

// FaultErrors returns the errors injected faults caused so far.
func (s *Sandbox) FaultErrors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.faultErrs...)
}

// Errors returns the errors the components hit so far.
func (s *Sandbox) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// Stats returns the function counters so far.
func (s *Sandbox) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Launches returns every CreateFleet call so far.
func (s *Sandbox) Launches() []Launch { return s.fleet.Launches() }

// CrashAfterNextLaunch makes the provisioner's next successful CreateFleet crash its invocation before
// the claim is updated (the failure the lifecycle function's adoption repairs).
func (s *Sandbox) CrashAfterNextLaunch() { s.fleet.CrashAfterNextLaunch() }

// FunctionWrites returns every mutating request the functions' identity sent to the API server so far.
func (s *Sandbox) FunctionWrites() []Write { return s.writes.Writes() }

// WebhookLatencies returns the webhook handler's durations so far.
func (s *Sandbox) WebhookLatencies() []time.Duration { return s.hook.latencies() }

// Close stops the functions, the webhook, the control plane and moto.
func (s *Sandbox) Close() {
	if s.cancel != nil {
		s.cancel()
		s.wg.Wait()
	}
	if s.hook != nil {
		s.hook.close()
	}
	if s.CP != nil {
		s.CP.Stop()
	}
	if s.Moto != nil {
		s.Moto.Stop()
	}
}

// sandboxNodeClassCacheAge is how long the sandbox's functions keep an EC2NodeClass's resolution: long
// enough that a burst's chain of runs resolves once, as a warm function does (without the cache every
// run asked moto again, 55-90 ms of each run in the detection scenario), and short enough that an AMI a
// scenario publishes (drift) is used within seconds, not the deployed functions' five minutes.
const sandboxNodeClassCacheAge = 5 * time.Second

// newProvisioner wires a provisioner to the sandbox the way provisioning.NewOnAWS wires the deployed
// functions' — moto's EC2, SSM and IAM, the local control plane's join data, the functions' identity, the
// EC2NodeClass resolution cache — except that launches go through the fleet watch, so the timeline shows
// them, and the cache keeps a resolution for sandboxNodeClassCacheAge, not five minutes.
// Each function that launches (the provisioner, the disruption function) gets its own, as in Lambda;
// seed tells their claim-name draws apart. mirrors writes the NodeClaim mirrors of its launches (the
// provisioner's, as its main wires it; nil for the disruption function's, as deployed).
func (s *Sandbox) newProvisioner(f footprint.Function, prices *pricing.Provider, seed uint64, mirrors *provisioning.LaunchMirrors) *provisioning.Provisioner {
	snapshots := kube.NewSnapshotter(s.FunctionClient(f), provisioning.SnapshotOptions)
	// The provisioner function reads CapacityBuffers (when the CapacityBuffer gate is on), as
	// functions/provisioner wires it; the disruption function's launch path does not.
	var buffers capacitybuffer.Cluster
	if f == footprint.Provisioner {
		buffers = kube.NewBuffers(s.FunctionClient(f), "")
	}
	resolver := nodeclass.New(s.EC2, ssm.NewFromConfig(s.AWS), iam.NewFromConfig(s.AWS), Cluster, "us-east-1", time.Now)
	var memo mirror.UIDSource
	if mirrors != nil {
		memo, _ = mirrors.Writer.(mirror.UIDSource)
	}
	return provisioning.New(provisioning.Config{
		Cluster: launchtemplate.Cluster{Name: Cluster, Endpoint: s.CP.Config.Host, CABundle: base64.StdEncoding.EncodeToString(s.CP.Config.CAData),
			ServiceCIDR: "10.0.0.0/24", DNSIP: "10.0.0.10"},
		KubernetesVersion: "1.34",
	}, provisioning.Dependencies{
		Store:       s.Store,
		Cluster:     snapshots,
		Pods:        snapshots,
		Visibility:  s.SQS,
		NodeClasses: nodeclass.NewCache(resolver, sandboxNodeClassCacheAge, time.Now),
		Catalog:     s.EC2,
		Prices:      prices,
		Templates:   launchtemplate.New(s.EC2, Cluster, time.Now),
		Launcher:    s.Launcher,
		Events:      s.claimEvents(f, memo),
		Buffers:     buffers,
		Now:         time.Now,
		Rand:        rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), seed)),
		Mirrors:     mirrors,
	})
}
