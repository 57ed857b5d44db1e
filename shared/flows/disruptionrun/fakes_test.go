package disruptionrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/driftinput"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// now is the fake clock's start: pods were created months before, so consolidateAfter has passed.
var start = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fakeStore is the state table in memory.
type fakeStore struct {
	mu        sync.Mutex
	now       func() time.Time
	leaseHeld bool
	config    []state.ConfigItem
	configErr error
	claims    map[string]state.Claim
	commands  map[string]state.DisruptionCommand
	// ledger: reservations per pool, with when they were taken.
	ledger    map[string]map[string]time.Time
	decisions []state.Decision
	// updates counts the claim writes UpdateClaim committed.
	updates int
}

func newFakeStore(now func() time.Time) *fakeStore {
	return &fakeStore{now: now, claims: map[string]state.Claim{}, commands: map[string]state.DisruptionCommand{},
		ledger: map[string]map[string]time.Time{}}
}

func (s *fakeStore) AcquireLease(_ context.Context, name, holder string, ttl time.Duration) (state.Lease, error) {
	if s.leaseHeld {
		return state.Lease{}, state.ErrLeaseHeld
	}
	return state.Lease{Name: name, Holder: holder}, nil
}
func (s *fakeStore) ReleaseLease(context.Context, state.Lease) error { return nil }
func (s *fakeStore) ListConfig(context.Context, string) ([]state.ConfigItem, error) {
	return s.config, s.configErr
}
func (s *fakeStore) ListClaims(context.Context) ([]state.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []state.Claim
	for _, c := range s.claims {
		out = append(out, c)
	}
	return out, nil
}
func (s *fakeStore) claim(name string) state.Claim {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claims[name]
}
func (s *fakeStore) GetClaim(_ context.Context, name string) (state.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[name]
	if !ok {
		return state.Claim{}, fmt.Errorf("claim %s: %w", name, state.ErrNotFound)
	}
	return c, nil
}
func (s *fakeStore) setClaim(c state.Claim) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims[c.Name] = c
}
func (s *fakeStore) UpdateClaim(_ context.Context, name string, mutate func(*state.Claim) error) (state.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[name]
	if !ok {
		return state.Claim{}, fmt.Errorf("claim %s: %w", name, state.ErrNotFound)
	}
	if err := mutate(&c); err != nil {
		return state.Claim{}, err
	}
	c.Version++
	s.claims[name] = c
	s.updates++
	return c, nil
}

func (s *fakeStore) claimWrites() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates
}
func (s *fakeStore) ListDisruptionCommands(context.Context) ([]state.DisruptionCommand, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []state.DisruptionCommand
	for _, c := range s.commands {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b state.DisruptionCommand) int { return a.StartedAt.Compare(b.StartedAt) })
	return out, nil
}
func (s *fakeStore) CreateDisruptionCommand(_ context.Context, c state.DisruptionCommand) (state.DisruptionCommand, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.commands[c.ID]; ok {
		return state.DisruptionCommand{}, state.ErrAlreadyExists
	}
	c.Version = 1
	s.commands[c.ID] = c
	return c, nil
}
func (s *fakeStore) PutDisruptionCommand(_ context.Context, c state.DisruptionCommand) (state.DisruptionCommand, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commands[c.ID].Version != c.Version {
		return state.DisruptionCommand{}, state.ErrConflict
	}
	c.Version++
	s.commands[c.ID] = c
	return c, nil
}
func (s *fakeStore) ReserveDisruption(_ context.Context, pool, claim string, allowed int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ledger[pool] == nil {
		s.ledger[pool] = map[string]time.Time{}
	}
	if _, ok := s.ledger[pool][claim]; ok {
		return nil
	}
	if len(s.ledger[pool]) >= allowed {
		return fmt.Errorf("reserving %s: %w", claim, state.ErrBudgetExhausted)
	}
	s.ledger[pool][claim] = s.now()
	return nil
}
func (s *fakeStore) ReleaseDisruption(_ context.Context, pool, claim string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ledger[pool], claim)
	return nil
}
func (s *fakeStore) DisruptionReservations(_ context.Context, pool string) ([]state.DisruptionReservation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []state.DisruptionReservation
	for claim, at := range s.ledger[pool] {
		out = append(out, state.DisruptionReservation{Claim: claim, At: at})
	}
	return out, nil
}
func (s *fakeStore) inFlight(pool string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ledger[pool])
}
func (s *fakeStore) RecordDecisions(_ context.Context, ds []state.Decision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.decisions = append(s.decisions, ds...)
	return nil
}
func (s *fakeStore) kinds(subject string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, d := range s.decisions {
		if d.Subject == subject {
			out = append(out, d.Kind)
		}
	}
	return out
}
func (s *fakeStore) command() state.DisruptionCommand {
	cs, _ := s.ListDisruptionCommands(context.Background())
	if len(cs) == 0 {
		return state.DisruptionCommand{}
	}
	return cs[len(cs)-1]
}

// fakeCluster is the API server in memory; it is also the node actions.
type fakeCluster struct {
	mu    sync.Mutex
	nodes []corev1.Node
	pods  []corev1.Pod
	pdbs  []*policyv1.PodDisruptionBudget
	err   error
	// reads counts snapshots; onRead runs before each (tests change the cluster between reads).
	reads  int
	onRead func(c *fakeCluster, read int)
	// onTaint runs before each taint.
	onTaint func(node string)
	// labelled names the Nodes Label wrote, one entry a write.
	labelled []string
}

func (c *fakeCluster) Snapshot(context.Context) (*kube.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	if c.onRead != nil {
		c.onRead(c, c.reads)
	}
	if c.err != nil {
		return nil, c.err
	}
	snap := &kube.Snapshot{Nodes: slices.Clone(c.nodes), PDBs: slices.Clone(c.pdbs)}
	for i := range snap.Nodes {
		snap.Nodes[i].Spec.Taints = slices.Clone(snap.Nodes[i].Spec.Taints)
	}
	pods := slices.Clone(c.pods)
	for i := range pods {
		if pods[i].Spec.NodeName != "" {
			snap.Bound = append(snap.Bound, &pods[i])
		} else {
			snap.Pending = append(snap.Pending, &pods[i])
		}
	}
	return snap, nil
}

func (c *fakeCluster) Taint(_ context.Context, node string, t corev1.Taint) error {
	if c.onTaint != nil {
		c.onTaint(node)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.nodes {
		if c.nodes[i].Name == node {
			for _, have := range c.nodes[i].Spec.Taints {
				if have.MatchTaint(&t) {
					return nil
				}
			}
			c.nodes[i].Spec.Taints = append(c.nodes[i].Spec.Taints, t)
			touch(&c.nodes[i].ObjectMeta)
			return nil
		}
	}
	return errors.New("node " + node + " not found")
}

func (c *fakeCluster) Untaint(_ context.Context, node string, t corev1.Taint) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.nodes {
		if c.nodes[i].Name == node {
			kept := slices.DeleteFunc(c.nodes[i].Spec.Taints, func(have corev1.Taint) bool { return have.MatchTaint(&t) })
			if len(kept) != len(c.nodes[i].Spec.Taints) {
				touch(&c.nodes[i].ObjectMeta)
			}
			c.nodes[i].Spec.Taints = kept
		}
	}
	return nil
}

// Label sets (nil: removes) labels on the Node, as kube.Actions does; it counts the writes.
func (c *fakeCluster) Label(_ context.Context, node string, labels map[string]*string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.nodes {
		if c.nodes[i].Name != node {
			continue
		}
		c.labelled = append(c.labelled, node)
		for k, v := range labels {
			if v == nil {
				delete(c.nodes[i].Labels, k)
			} else {
				c.nodes[i].Labels[k] = *v
			}
		}
		touch(&c.nodes[i].ObjectMeta)
		return nil
	}
	return errors.New("node " + node + " not found")
}

// touch gives an object a new resourceVersion, as the API server does on every write: tests that
// change an object between reads call it, so that the runner's later reads see the change.
func touch(m *metav1.ObjectMeta) {
	n, _ := strconv.Atoi(m.ResourceVersion)
	m.ResourceVersion = strconv.Itoa(n + 1)
}

func (c *fakeCluster) tainted(node string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.nodes {
		if c.nodes[i].Name == node {
			return hasDisruptedTaint(&c.nodes[i])
		}
	}
	return false
}

// fakeLauncher launches by writing a launched claim into the store.
type fakeLauncher struct {
	store      *fakeStore
	pools      []scheduling.NodePool
	prepareErr error
	launchErr  error
	mu         sync.Mutex
	names      int
	launched   []scheduling.ClaimPlan
	// drift is what Drift answers per claim (NotDrifted when absent); observed what it was asked with.
	drift    map[string]drift.Result
	observed map[string]driftinput.Observed
	// classFailures are what ClassBackoff judges from, per NodePool's class (the pool's name).
	classFailures []state.ClassFailures
	// settings are what Settings answers (the zero value: settings.Default).
	settings settings.Settings
	// reservations are what Reservations answers (the classes' resolved reservations); onDemand the
	// prices OnDemandPrice answers.
	reservations map[string]apis.CapacityReservationStatus
	onDemand     map[string]float64
	// staticErr is what StaticReplacement answers when set.
	staticErr error
}

func (l *fakeLauncher) Reservations() map[string]apis.CapacityReservationStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.reservations)
}

func (l *fakeLauncher) OnDemandPrice(instanceType string) (float64, bool) {
	p, ok := l.onDemand[instanceType]
	return p, ok
}

// StaticReplacement plans a medium on-demand claim of the pool, as the provisioning launch path would
// plan a static pool's claim, or staticErr.
func (l *fakeLauncher) StaticReplacement(pool string, _ scheduling.Input) (scheduling.ClaimPlan, error) {
	if l.staticErr != nil {
		return scheduling.ClaimPlan{}, l.staticErr
	}
	return scheduling.ClaimPlan{Name: pool + "-static", NodePool: pool, InstanceTypeOptions: []string{"medium"}, InstanceType: "medium",
		CapacityType: scheduling.CapacityTypeOnDemand, Why: "static replacement"}, nil
}

func (l *fakeLauncher) Settings() settings.Settings {
	if l.settings == (settings.Settings{}) {
		return settings.Default()
	}
	return l.settings
}

func (l *fakeLauncher) ClassBackoff(nodePool string, _ []state.Claim, now time.Time) (state.ClassBackoff, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.classFailures {
		if c.NodeClass == nodePool {
			return c.Backoff("", time.Time{}, now)
		}
	}
	return state.ClassBackoff{}, false
}

func (l *fakeLauncher) Drift(c state.Claim, obs driftinput.Observed) drift.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.observed == nil {
		l.observed = map[string]driftinput.Observed{}
	}
	l.observed[c.Name] = obs
	if r, ok := l.drift[c.Name]; ok {
		return r
	}
	return drift.Result{Verdict: drift.NotDrifted}
}

func (l *fakeLauncher) Lifetime(c state.Claim) drift.Lifetime {
	return drift.Lifetime{CreatedAt: c.CreatedAt, ExpireAfter: c.ExpireAfter}
}

func (l *fakeLauncher) setDrift(claim string, r drift.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drift == nil {
		l.drift = map[string]drift.Result{}
	}
	l.drift[claim] = r
}

func (l *fakeLauncher) PrepareLaunches(context.Context) (Launches, error) {
	if l.prepareErr != nil {
		return nil, l.prepareErr
	}
	return l, nil
}
func (l *fakeLauncher) ClaimName(pool string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names++
	return fmt.Sprintf("%s-r%d", pool, l.names)
}
func (l *fakeLauncher) NodePools() []scheduling.NodePool             { return l.pools }
func (l *fakeLauncher) Unavailable() scheduling.UnavailableOfferings { return nil }
func (l *fakeLauncher) Problems() []string                           { return nil }
func (l *fakeLauncher) InFlight(claims []state.Claim, snap *kube.Snapshot) []scheduling.InFlightClaim {
	return nil
}
func (l *fakeLauncher) Record(_ context.Context, cp scheduling.ClaimPlan, name string, replaces []string) (PendingLaunch, error) {
	now := l.store.now()
	l.store.setClaim(state.Claim{Name: name, NodePool: cp.NodePool, Lifecycle: state.Pending, Replaces: replaces, CreatedAt: now,
		InstanceTypes: cp.InstanceTypeOptions})
	return &fakePending{l: l, cp: cp, name: name}, nil
}

type fakePending struct {
	l    *fakeLauncher
	cp   scheduling.ClaimPlan
	name string
}

func (p *fakePending) Name() string { return p.name }

// Launch launches the recorded claim; with launchErr it fails as a launch with no capacity does (the
// claim deleted).
func (p *fakePending) Launch(context.Context) (*provisioning.LaunchedClaim, error) {
	l, cp := p.l, p.cp
	l.mu.Lock()
	l.launched = append(l.launched, cp)
	l.mu.Unlock()
	c := l.store.claim(p.name)
	if l.launchErr != nil {
		c.Lifecycle = state.Deleted
		l.store.setClaim(c)
		return nil, l.launchErr
	}
	now := l.store.now()
	c.Lifecycle, c.InstanceType, c.Zone, c.CapacityType, c.PricePerHour, c.LaunchedAt = state.Launched, cp.InstanceType, cp.Zone,
		cp.CapacityType, cp.Price, &now
	l.store.setClaim(c)
	return &provisioning.LaunchedClaim{Name: p.name, NodePool: cp.NodePool, InstanceType: cp.InstanceType, Zone: cp.Zone,
		CapacityType: cp.CapacityType, Price: cp.Price}, nil
}

type fakeTerminations struct {
	mu   sync.Mutex
	sent []termination.Request
}

func (f *fakeTerminations) Send(_ context.Context, r termination.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, r)
	return nil
}
func (f *fakeTerminations) claims() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, r := range f.sent {
		out[r.Claim] = r.Reason
	}
	return out
}

type fakeEvents struct {
	mu     sync.Mutex
	events []kube.Event
}

func (f *fakeEvents) Publish(_ context.Context, e kube.Event) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
	return true, nil
}
func (f *fakeEvents) reasons(node string) []kube.Reason {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []kube.Reason
	for _, e := range f.events {
		if e.Object.Name == node {
			out = append(out, e.Reason)
		}
	}
	return out
}

// fixture is a runner over fakes: one NodePool "default" (amd64, SmallCatalog) with budget nodes.
type fixture struct {
	t       testing.TB
	clock   *fakeClock
	store   *fakeStore
	cluster *fakeCluster
	launch  *fakeLauncher
	terms   *fakeTerminations
	events  *fakeEvents
	runner  *Runner
	catalog []*scheduling.InstanceType
}

const poolYAML = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets: [{nodes: "%s"}]
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`

func newFixture(t testing.TB, budget string) *fixture {
	f := &fixture{t: t, clock: &fakeClock{t: start}, cluster: &fakeCluster{}, terms: &fakeTerminations{}, events: &fakeEvents{},
		catalog: schedulingtest.SmallCatalog()}
	f.store = newFakeStore(f.clock.Now)
	objs := decode(t, fmt.Sprintf(poolYAML, budget))
	spec, err := json.Marshal(objs.NodePools[0])
	require.NoError(t, err)
	f.store.config = []state.ConfigItem{{Kind: state.KindNodePool, Name: "default", Spec: string(spec)}}
	sp := schedulingtest.NodePool("default", schedulingtest.Requirement(scheduling.LabelArch, scheduling.OpIn, "amd64"))
	sp.InstanceTypes = f.catalog
	f.launch = &fakeLauncher{store: f.store, pools: []scheduling.NodePool{sp}}
	f.runner = New(Config{ValidationDelay: -1}, Deps{Store: f.store, Cluster: f.cluster, Launcher: f.launch, Nodes: f.cluster,
		Terminations: f.terms, Events: f.events, Now: f.clock.Now})
	return f
}

// node adds an initialized Nodewright node of instance type itype (on-demand, us-west-2a) with a claim
// "claim-NAME" launched an hour ago, and pods of the given CPU requests bound to it.
func (f *fixture) node(name, itype string, cpus ...string) {
	var it *scheduling.InstanceType
	for _, c := range f.catalog {
		if c.Name == itype {
			it = c
		}
	}
	require.NotNil(f.t, it)
	zone, ct := schedulingtest.Zones[0], scheduling.CapacityTypeOnDemand
	labels := map[string]string{scheduling.LabelInstanceType: itype, scheduling.LabelZone: zone, scheduling.LabelCapacityType: ct,
		scheduling.LabelOS: "linux", scheduling.LabelNodePool: "default", scheduling.LabelNodeInitalized: "true"}
	for k, v := range it.Requirements.Labels() {
		if k != scheduling.LabelZone && k != scheduling.LabelCapacityType {
			labels[k] = v
		}
	}
	n := schedulingtest.Node(schedulingtest.NodeOptions{Name: name, Labels: labels,
		CPU: fmt.Sprintf("%dm", it.Allocatable.CPU), Memory: fmt.Sprintf("%d", it.Allocatable.Memory), Pods: it.Allocatable.Pods})
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	n.Spec.ProviderID = "aws:///" + zone + "/i-" + name
	n.UID = types.UID("uid-" + name)
	n.ResourceVersion = "1"
	f.cluster.nodes = append(f.cluster.nodes, *n)
	price := 0.0
	for _, o := range it.Offerings {
		if o.Zone == zone && o.CapacityType == ct {
			price = o.Price
		}
	}
	launched := start.Add(-time.Hour)
	init := launched.Add(time.Minute)
	f.store.setClaim(state.Claim{Name: "claim-" + name, NodePool: "default", Lifecycle: state.Initialized, InstanceType: itype,
		Zone: zone, CapacityType: ct, PricePerHour: price, ProviderID: n.Spec.ProviderID, NodeName: name,
		CreatedAt: launched, LaunchedAt: &launched, InitializedAt: &init})
	for i, cpu := range cpus {
		f.pod(fmt.Sprintf("%s-p%d", name, i), name, cpu)
	}
}

// pod binds a running ReplicaSet pod requesting cpu to node.
func (f *fixture) pod(name, node, cpu string) *corev1.Pod {
	p := schedulingtest.Pod(schedulingtest.PodOptions{Name: name, Owner: name, CPU: cpu, Memory: "256Mi", Labels: map[string]string{"app": name}})
	p.Spec.NodeName = node
	p.UID = types.UID("uid-" + name)
	p.ResourceVersion = "1"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	f.cluster.pods = append(f.cluster.pods, *p)
	return &f.cluster.pods[len(f.cluster.pods)-1]
}

func (f *fixture) run() Report {
	rep, err := f.runner.Run(context.Background(), "run")
	require.NoError(f.t, err)
	require.True(f.t, rep.Lease)
	return rep
}

// initialize marks a claim initialized.
func (f *fixture) initialize(name string) {
	c := f.store.claim(name)
	now := f.clock.Now()
	c.Lifecycle, c.InitializedAt = state.Initialized, &now
	f.store.setClaim(c)
}

// gone marks a claim deleted and removes its node.
func (f *fixture) gone(node string) {
	c := f.store.claim("claim-" + node)
	c.Lifecycle = state.Deleted
	f.store.setClaim(c)
	f.cluster.nodes = slices.DeleteFunc(f.cluster.nodes, func(n corev1.Node) bool { return n.Name == node })
	f.cluster.pods = slices.DeleteFunc(f.cluster.pods, func(p corev1.Pod) bool { return p.Spec.NodeName == node })
}
