package provisioning

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// staticPoolYAML is a static NodePool "fixed" of replicas nodes on the default class, with limits.
func staticPoolYAML(replicas, limits string) string {
	return `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: ` + replicas + `
  limits: ` + limits + `
  template:
    metadata:
      labels: {role: fixed}
    spec:
      taints: [{key: dedicated, value: fixed, effect: NoSchedule}]
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
` + nodeClassRef
}

// withStaticPool stores the static pool and settings with StaticCapacity as gate says.
func withStaticPool(t *testing.T, s *state.Store, yaml string, gate bool) {
	t.Helper()
	ctx := context.Background()
	_, err := s.ApplyConfig(ctx, append(storedConfig(t, poolAndClass), storedConfig(t, yaml)...), false)
	require.NoError(t, err)
	set := settings.Default()
	set.FeatureGates.StaticCapacity = gate
	item, err := state.SettingsItem(set)
	require.NoError(t, err)
	_, err = s.PutConfig(ctx, item)
	require.NoError(t, err)
}

// poolClaims lists the live claims of pool.
func poolClaims(t *testing.T, s *state.Store, pool string) []state.Claim {
	t.Helper()
	all, err := s.ListClaims(context.Background())
	require.NoError(t, err)
	var out []state.Claim
	for _, c := range all {
		if c.NodePool == pool {
			out = append(out, c)
		}
	}
	return out
}

func TestStaticLaunches(t *testing.T) {
	none := int64(math.MaxInt64)
	for _, c := range []struct {
		name                                 string
		replicas, limit, active, deleting, n int64
	}{
		{"empty pool scales to replicas", 3, none, 0, 0, 3},
		{"a deleting node is replaced", 3, none, 2, 1, 1},
		{"the nodes limit counts deleting nodes", 3, 3, 2, 1, 0},
		{"the nodes limit caps a scale-up", 3, 2, 0, 0, 2},
		{"a limit below the active count launches nothing", 3, 1, 2, 0, 0},
		{"more active than replicas launches nothing", 1, none, 3, 0, 0},
		{"zero replicas", 0, none, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.n, StaticLaunches(c.replicas, c.limit, StaticCount{Active: c.active, Deleting: c.deleting}))
		})
	}
}

func TestStaticCountSortsClaimsByLifecycle(t *testing.T) {
	now := time.Now()
	claims := []state.Claim{
		{Name: "p", NodePool: "fixed", Lifecycle: state.Pending},
		{Name: "l", NodePool: "fixed", Lifecycle: state.Launched},
		{Name: "r", NodePool: "fixed", Lifecycle: state.Registered},
		{Name: "i", NodePool: "fixed", Lifecycle: state.Initialized},
		{Name: "d", NodePool: "fixed", Lifecycle: state.Draining},
		{Name: "t", NodePool: "fixed", Lifecycle: state.Terminating},
		{Name: "sent", NodePool: "fixed", Lifecycle: state.Initialized, TerminationSentAt: &now},
		{Name: "lost", NodePool: "fixed", Lifecycle: state.Initialized, NodeLostAt: &now},
		{Name: "gone", NodePool: "fixed", Lifecycle: state.Deleted},
		{Name: "other", NodePool: "default", Lifecycle: state.Initialized},
	}
	assert.Equal(t, StaticCount{Active: 4, Deleting: 4}, CountStatic(claims, "fixed"))
}

// TestRunScalesStaticPoolUpToReplicas: with no pending pod, a run launches a static pool's replicas
// (claims without pods, the pool's labels), the next run launches nothing more, and once a claim is
// handed to the termination flow the next run replaces it.
func TestRunScalesStaticPoolUpToReplicas(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot()})
	withStaticPool(t, w.store, staticPoolYAML("3", "{nodes: 5}"), true)

	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, 3)
	for _, c := range rep.Claims {
		assert.Equal(t, "fixed", c.NodePool)
		assert.Zero(t, c.Pods)
		assert.NotEmpty(t, c.InstanceID)
	}
	require.Len(t, rep.Static, 1)
	assert.Contains(t, rep.Static[0], "static nodepool fixed keeps 3 replicas: 0 active, 0 deleting, launching 3")
	claims := poolClaims(t, w.store, "fixed")
	require.Len(t, claims, 3)
	assert.Equal(t, "fixed", claims[0].Labels["role"])
	assert.Empty(t, poolClaims(t, w.store, "default"), "the dynamic pool launches nothing without pods")

	again, err := w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, again.Claims, "the pool has its replicas")

	_, err = w.store.UpdateClaim(ctx, claims[0].Name, func(c *state.Claim) error {
		now := time.Now()
		c.TerminationSentAt = &now
		return nil
	})
	require.NoError(t, err)
	third, err := w.p.Run(ctx, "run-3")
	require.NoError(t, err)
	require.Len(t, third.Claims, 1, "the node on its way out is replaced")
	assert.Len(t, poolClaims(t, w.store, "fixed"), 4)
}

// TestRunStaticPoolRespectsNodesLimit: limits.nodes caps the pool below its replicas, and the run says so.
func TestRunStaticPoolRespectsNodesLimit(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot()})
	withStaticPool(t, w.store, staticPoolYAML("3", "{nodes: 2}"), true)
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Len(t, rep.Claims, 2)
	assert.Contains(t, rep.Static, "static nodepool fixed: 0 of 3 replicas, 0 deleting; limits.nodes 2 holds back 1")
	again, err := w.p.Run(context.Background(), "run-2")
	require.NoError(t, err)
	assert.Empty(t, again.Claims)
	assert.Len(t, poolClaims(t, w.store, "fixed"), 2)
}

// TestRunLeavesStaticPoolAloneWithTheGateOff: a static pool stored while StaticCapacity is off launches
// nothing, and the run says why.
func TestRunLeavesStaticPoolAloneWithTheGateOff(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot()})
	withStaticPool(t, w.store, staticPoolYAML("3", "{nodes: 5}"), false)
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	assert.Contains(t, rep.Errors, "NodePool fixed is static (spec.replicas) but the StaticCapacity feature gate is off: its count is not kept")
}

// TestRunNeverLaunchesStaticNodesForPendingPods: pods that only a static pool could take (its label and
// taint) get no new node of it beyond its replicas, as in Karpenter: static pools take pods only on the
// nodes they keep.
func TestRunNeverLaunchesStaticNodesForPendingPods(t *testing.T) {
	p1, p2 := pod("a", map[string]string{"role": "fixed"}), pod("b", map[string]string{"role": "fixed"})
	for _, p := range []*corev1.Pod{&p1, &p2} {
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "fixed", Effect: corev1.TaintEffectNoSchedule}}
	}
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(p1, p2)})
	withStaticPool(t, w.store, staticPoolYAML("1", "{nodes: 5}"), true)
	for _, run := range []string{"run-1", "run-2"} {
		_, err := w.p.Run(context.Background(), run)
		require.NoError(t, err)
	}
	assert.Len(t, poolClaims(t, w.store, "fixed"), 1, "one replica, whatever the pods ask")
	assert.Empty(t, poolClaims(t, w.store, "default"), "the dynamic pool has no such label")
}

// TestStaticNeedsAreBoundedPerRun: a pool asking for more than MaxStaticLaunchesPerRun claims (replicas
// is unbounded) gets that many this run, pools after it none, and the report says the rest wait.
func TestStaticNeedsAreBoundedPerRun(t *testing.T) {
	pools := []staticPool{
		{pool: staticView("a"), replicas: 1_000_000_000, nodeLimit: math.MaxInt64},
		{pool: staticView("b"), replicas: 2, nodeLimit: math.MaxInt64},
	}
	needs, held := staticNeeds(pools, nil)
	require.Len(t, needs, 1)
	assert.EqualValues(t, MaxStaticLaunchesPerRun, needs[0].n)
	assert.Len(t, held, 2)
	assert.Contains(t, held[0], "static nodepool a: 999999500 more claims wait for the next run")
	assert.Contains(t, held[1], "static nodepool b: 2 more claims wait for the next run")
}

func staticView(name string) scheduling.NodePool { return scheduling.NodePool{Name: name} }
