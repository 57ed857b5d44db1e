package lifecycle

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// Fakes for the hand-over and registration-order tests: a store with configuration and hooks to inject
// what a concurrent writer does, a Node writer that records its calls, and a termination queue.

// configItems is a valid NodePool "default" as stored, plus a NodePool "broken" whose stored spec does not
// decode (a configuration problem, not a removal).
func configItems() []state.ConfigItem {
	return []state.ConfigItem{
		{Kind: state.KindNodePool, Name: "default", Spec: `{"metadata":{"name":"default"},"spec":{"template":{"spec":{
			"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},
			"requirements":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]}]}}}}`},
		{Kind: state.KindNodePool, Name: "broken", Spec: "{"},
	}
}

// testNow is the rig's clock at its start.
var testNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// hookStore is fakeStore with configuration; afterList runs after the claims were listed, as a writer
// that moves a claim between the pass's read and its write.
type hookStore struct {
	fakeStore
	config []state.ConfigItem
	// poolsErr fails the NodePool-only listing (the whole-configuration read still works).
	poolsErr  error
	afterList func(s *hookStore)
}

func (s *hookStore) ListConfig(_ context.Context, kind string) ([]state.ConfigItem, error) {
	if kind != "" && s.poolsErr != nil {
		return nil, s.poolsErr
	}
	var out []state.ConfigItem
	for _, it := range s.config {
		if kind == "" || it.Kind == kind {
			out = append(out, it)
		}
	}
	return out, nil
}

func (s *hookStore) ListClaims(ctx context.Context) ([]state.Claim, error) {
	out, err := s.fakeStore.ListClaims(ctx)
	if s.afterList != nil {
		s.afterList(s)
	}
	return out, err
}

// claim is the stored claim called name.
func (s *hookStore) claim(t *testing.T, name string) *state.Claim {
	t.Helper()
	for i := range s.claims {
		if s.claims[i].Name == name {
			return &s.claims[i]
		}
	}
	require.FailNow(t, "no claim "+name)
	return nil
}

// decisionsOf returns subject's decisions as Kind/Reason.
func (s *hookStore) decisionsOf(subject string) []string {
	var out []string
	for _, d := range s.decisions {
		if d.Subject == subject {
			out = append(out, d.Kind+"/"+d.Reason)
		}
	}
	return out
}

// listedNodes lists fixed Nodes.
type listedNodes []*corev1.Node

func (l listedNodes) List(context.Context, metav1.ListOptions) (*corev1.NodeList, error) {
	out := &corev1.NodeList{}
	for _, n := range l {
		out.Items = append(out.Items, *n.DeepCopy())
	}
	return out, nil
}

// recWriter records every Node write as "<verb> <node> <what>"; before runs ahead of each (on the
// pass's workers, unlocked). It is safe for concurrent use, as the API server is.
type recWriter struct {
	mu     sync.Mutex
	calls  []string
	before func(call string)
}

func (w *recWriter) rec(call string) error {
	if w.before != nil {
		w.before(call)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, call)
	return nil
}

func (w *recWriter) Taint(_ context.Context, node string, t corev1.Taint) error {
	return w.rec("taint " + node + " " + t.Key)
}
func (w *recWriter) Untaint(_ context.Context, node string, t corev1.Taint) error {
	return w.rec("untaint " + node + " " + t.Key)
}
func (w *recWriter) Label(_ context.Context, node string, _ map[string]*string) error {
	return w.rec("label " + node)
}
func (w *recWriter) Annotate(_ context.Context, node string, _ map[string]string) error {
	return w.rec("annotate " + node)
}
func (w *recWriter) AddFinalizer(_ context.Context, node, f string) error {
	return w.rec("addFinalizer " + node + " " + f)
}
func (w *recWriter) RemoveFinalizer(_ context.Context, node, f string) error {
	return w.rec("removeFinalizer " + node + " " + f)
}

// queue records the termination requests sent; err fails every send.
type queue struct {
	sent []termination.Request
	err  error
}

func (q *queue) Send(_ context.Context, req termination.Request) error {
	if q.err != nil {
		return q.err
	}
	q.sent = append(q.sent, req)
	return nil
}

// listedInstances lists fixed instances, or fails with err; asked by id, it also knows live (instances a
// lagging list misses), or fails with liveErr.
type listedInstances struct {
	list, live []instance.Instance
	err        error
	liveErr    error
}

func (l listedInstances) List(context.Context) ([]instance.Instance, error) { return l.list, l.err }
func (l listedInstances) LiveByID(ctx context.Context, ids []string) ([]instance.Instance, error) {
	if l.err != nil {
		return nil, l.err
	}
	if l.liveErr != nil {
		return nil, l.liveErr
	}
	return fakeInstances{list: append(slices.Clone(l.list), l.live...)}.LiveByID(ctx, ids)
}

// rig is one pass's fakes.
type rig struct {
	store     *hookStore
	nodes     listedNodes
	writer    *recWriter
	queue     *queue
	instances listedInstances
	templates UnusedTemplates
	profiles  UnusedProfiles
	namer     InstanceNamer
	now       time.Time
}

func newRig(t *testing.T, claims ...state.Claim) *rig {
	return &rig{store: &hookStore{fakeStore: fakeStore{claims: claims}, config: configItems()}, writer: &recWriter{},
		queue: &queue{}, now: testNow}
}

func (r *rig) run(t *testing.T) RunReport {
	t.Helper()
	runner := NewRunner(RunnerConfig{}, RunnerDeps{Store: r.store, Nodes: r.nodes, NodeActions: r.writer,
		Instances: r.instances, Terminations: r.queue, Templates: r.templates, Profiles: r.profiles, Namer: r.namer,
		Now: func() time.Time { return r.now }})
	rep, err := runner.Run(context.Background(), "run-1")
	if r.instances.err == nil {
		require.NoError(t, err)
	}
	return rep
}

// at returns a pointer to a time d from base.
func at(base time.Time, d time.Duration) *time.Time {
	t := base.Add(d)
	return &t
}

// ourNode is a Node with a providerID for instance id in us-east-1a, the NodePool label, and
// Nodewright's finalizer, Ready; deleting gives it a deletionTimestamp.
func ourNode(name, id string, deleting bool) *corev1.Node {
	n := node(name, "aws:///us-east-1a/"+id, map[string]string{"karpenter.sh/nodepool": "default"})
	n.Finalizers = []string{"nodewright.sh/termination"}
	// Ready, so the ghost-node repair (a Node whose instance is not listed) leaves it to these rules.
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	if deleting {
		ts := metav1.NewTime(testNow.Add(-time.Minute))
		n.DeletionTimestamp = &ts
	}
	return n
}

// claimOn is a claim of pool in lifecycle l for instance id, on Node nodeName (may be empty).
func claimOn(name, pool string, l state.Lifecycle, id, nodeName string) state.Claim {
	created := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	return state.Claim{Name: name, NodePool: pool, NodeClass: "default", Lifecycle: l, InstanceID: id, Zone: "us-east-1a",
		ProviderID: "aws:///us-east-1a/" + id, NodeName: nodeName, CreatedAt: created, LaunchedAt: &created}
}

// stalledClaim is a claim that entered lifecycle l (draining or terminating) 20 minutes before testNow.
func stalledClaim(name string, l state.Lifecycle) state.Claim {
	c := claimOn(name, "default", l, "i-0"+name, "ip-"+name)
	if l == state.Terminating {
		c.TerminatingAt = at(testNow, -20*time.Minute)
	} else {
		c.DrainingAt = at(testNow, -20*time.Minute)
	}
	return c
}
