package disruptionrun

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

const staticPoolYAML = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: %d
  disruption:
    budgets: %s
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`

// withStaticPool stores static NodePool "fixed" of replicas with the given budgets (YAML) beside the
// fixture's "default" pool, and turns the StaticCapacity gate on.
func (f *fixture) withStaticPool(replicas int, budgets string) {
	objs := decode(f.t, fmt.Sprintf(staticPoolYAML, replicas, budgets))
	spec, err := json.Marshal(objs.NodePools[0])
	require.NoError(f.t, err)
	f.store.config = append(f.store.config, state.ConfigItem{Kind: state.KindNodePool, Name: "fixed", Spec: string(spec)})
	s := settings.Default()
	s.FeatureGates.StaticCapacity = true
	f.launch.settings = s
}

// staticNode adds node name (see fixture.node) to the static pool "fixed".
func (f *fixture) staticNode(name string, cpus ...string) {
	f.node(name, "medium", cpus...)
	c := f.store.claim("claim-" + name)
	c.NodePool = "fixed"
	f.store.setClaim(c)
	for i := range f.cluster.nodes {
		if n := &f.cluster.nodes[i]; n.Name == name {
			n.Labels[scheduling.LabelNodePool] = "fixed"
		}
	}
}

// staticClaim adds a claim of "fixed" with no Node: launched or not.
func (f *fixture) staticClaim(name string, launched bool, age time.Duration) {
	created := start.Add(-age)
	c := state.Claim{Name: name, NodePool: "fixed", Lifecycle: state.Pending, CreatedAt: created}
	if launched {
		c.Lifecycle, c.LaunchedAt, c.InstanceType, c.ProviderID = state.Launched, &created, "medium", "aws:///us-west-2a/i-"+name
	}
	f.store.setClaim(c)
}

// TestStaticScaleDownTakesKarpentersOrder: a static pool of 6 live claims lowered to 2 replicas gives up
// 4 in Karpenter's order (not launched, launched without a Node, empty, then the lowest disruption cost),
// in one delete command with reason Overprovisioned, handed to the termination flow with no replacement,
// its nodes tainted and the decision recorded under each node and claim.
func TestStaticScaleDownTakesKarpentersOrder(t *testing.T) {
	f := newFixture(t, "100%")
	f.withStaticPool(2, `[{nodes: "100%"}]`)
	f.staticClaim("unlaunched", false, time.Minute)
	f.staticClaim("unregistered", true, 2*time.Minute)
	f.staticNode("empty")
	f.staticNode("one-pod", "100m")
	f.staticNode("three-pods", "100m", "100m", "100m")
	f.staticNode("two-pods", "100m", "100m")

	rep := f.run()

	sent := f.terms.claims()
	assert.Equal(t, map[string]string{"unlaunched": string(ReasonOverprovisioned), "unregistered": string(ReasonOverprovisioned),
		"claim-empty": string(ReasonOverprovisioned), "claim-one-pod": string(ReasonOverprovisioned)}, sent)
	require.Len(t, rep.Commands, 1, "report: %+v", rep)
	cmd := rep.Commands[0]
	assert.Equal(t, ReasonOverprovisioned, cmd.Reason)
	assert.Equal(t, MethodStaticScaleDown, cmd.Method)
	assert.Equal(t, disruption.ActionDelete, cmd.Action)
	assert.Empty(t, cmd.Replacements, "a static scale-down replaces nothing")
	assert.Contains(t, cmd.Why, "6 live claims for 2 replicas")
	assert.True(t, f.cluster.tainted("empty"))
	assert.True(t, f.cluster.tainted("one-pod"))
	assert.False(t, f.cluster.tainted("two-pods"))
	assert.Contains(t, f.store.kinds("node/empty"), KindDisrupt)
	assert.Contains(t, f.store.kinds("nodeclaim/unlaunched"), KindDisrupt)
	assert.Equal(t, state.CommandTerminating, f.store.command().Phase)
	assert.Equal(t, []string{"static nodepool fixed: 6 of 2 replicas; removing 4"}, rep.StaticScaleDown)
	assert.Equal(t, 4, rep.HandedOver["fixed/"+string(ReasonOverprovisioned)])
}

// TestStaticScaleDownDoesNotRemoveTwiceWhileClaimsGo: the claims a scale-down handed over count as
// going until they are gone, so the next run removes nothing more.
func TestStaticScaleDownDoesNotRemoveTwiceWhileClaimsGo(t *testing.T) {
	f := newFixture(t, "100%")
	f.withStaticPool(1, `[{nodes: "100%"}]`)
	for _, n := range []string{"a", "b", "c"} {
		f.staticNode(n)
	}
	f.run()
	require.Len(t, f.terms.claims(), 2)

	f.clock.Advance(time.Minute)
	rep := f.run()
	assert.Empty(t, rep.Commands)
	assert.Empty(t, rep.StaticScaleDown)
	assert.Len(t, f.terms.claims(), 2)
}

// TestStaticScaleDownHonoursTheBudgets: a budget of one node lets one node go per run while another is
// going; a budget for other reasons only does not hold it; a budget of 0 holds every node but not a
// claim without a Node.
func TestStaticScaleDownHonoursTheBudgets(t *testing.T) {
	t.Run("one at a time", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.withStaticPool(1, `[{nodes: "1"}]`)
		for _, n := range []string{"a", "b", "c"} {
			f.staticNode(n)
		}
		rep := f.run()
		assert.Equal(t, map[string]string{"claim-a": string(ReasonOverprovisioned)}, f.terms.claims())
		require.Len(t, rep.StaticScaleDown, 1)
		assert.Contains(t, rep.StaticScaleDown[0], "removing 1 (the pool's disruption budgets allow no more now; 1 nodes wait)")

		f.clock.Advance(time.Minute)
		rep = f.run()
		assert.Len(t, f.terms.claims(), 1, "a still goes: the budget is used")
		assert.Contains(t, rep.StaticScaleDown[0], "removing 0")

		f.gone("a")
		f.clock.Advance(time.Minute)
		f.run()
		assert.Contains(t, f.terms.claims(), "claim-b")
	})
	t.Run("a budget for other reasons", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.withStaticPool(1, `[{nodes: "0", reasons: [Drifted, Empty, Underutilized]}]`)
		f.staticNode("a")
		f.staticNode("b")
		f.run()
		assert.Len(t, f.terms.claims(), 1)
	})
	t.Run("zero holds nodes, not claims without one", func(t *testing.T) {
		f := newFixture(t, "100%")
		f.withStaticPool(1, `[{nodes: "0"}]`)
		f.staticNode("a")
		f.staticNode("b")
		f.staticClaim("pending", false, time.Minute)
		rep := f.run()
		assert.Equal(t, map[string]string{"pending": string(ReasonOverprovisioned)}, f.terms.claims())
		assert.False(t, f.cluster.tainted("a"))
		assert.False(t, f.cluster.tainted("b"))
		assert.Contains(t, rep.StaticScaleDown[0], "1 nodes wait")
	})
}

// TestStaticScaleDownLeavesProtectedNodes: a node protected by do-not-disrupt (its own annotation or a
// pod's) is never picked, and the report says so; the gate off removes nothing.
func TestStaticScaleDownLeavesProtectedNodes(t *testing.T) {
	f := newFixture(t, "100%")
	f.withStaticPool(0, `[{nodes: "100%"}]`)
	f.staticNode("free", "100m")
	f.staticNode("pod-protected", "100m")
	f.staticNode("node-protected")
	for i := range f.cluster.pods {
		if p := &f.cluster.pods[i]; p.Spec.NodeName == "pod-protected" {
			p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
		}
	}
	for i := range f.cluster.nodes {
		if n := &f.cluster.nodes[i]; n.Name == "node-protected" {
			n.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
		}
	}
	rep := f.run()
	assert.Equal(t, map[string]string{"claim-free": string(ReasonOverprovisioned)}, f.terms.claims())
	require.Len(t, rep.StaticScaleDown, 1)
	assert.Contains(t, rep.StaticScaleDown[0], "node node-protected kept: the node has the karpenter.sh/do-not-disrupt annotation")
	assert.Contains(t, rep.StaticScaleDown[0], "node pod-protected kept: pod default/pod-protected-p0 has the karpenter.sh/do-not-disrupt annotation")

	t.Run("gate off", func(t *testing.T) {
		g := newFixture(t, "100%")
		g.withStaticPool(0, `[{nodes: "100%"}]`)
		g.launch.settings = settings.Default()
		g.staticNode("a")
		rep := g.run()
		assert.Empty(t, g.terms.claims())
		assert.Empty(t, rep.StaticScaleDown)
	})
}

// TestPlanStaticScaleDownOrdersByDisruptionCost: among busy nodes the lowest rescheduling cost times
// lifetime remaining goes first (a node near its expiry costs less), and a pool at its count gives up
// nothing.
func TestPlanStaticScaleDownOrdersByDisruptionCost(t *testing.T) {
	now := start
	node := func(name string, pods int, expiresIn time.Duration) disruption.Node {
		n := disruption.Node{Node: &corev1.Node{}, NodePool: "fixed", Claim: "claim-" + name, Initialized: true,
			LaunchedAt: now.Add(-time.Hour)}
		n.Node.Name = name
		for i := 0; i < pods; i++ {
			p := &corev1.Pod{}
			p.Name, p.Status.Phase = fmt.Sprintf("%s-%d", name, i), corev1.PodRunning
			n.Pods = append(n.Pods, p)
		}
		if expiresIn > 0 {
			n.ExpiresAt = now.Add(expiresIn)
		}
		return n
	}
	nodes := []disruption.Node{node("young-two", 2, 0), node("old-two", 2, 10*time.Minute), node("one", 1, 0)}
	var claims []state.Claim
	for _, n := range nodes {
		claims = append(claims, state.Claim{Name: n.Claim, NodePool: "fixed", Lifecycle: state.Initialized, NodeName: n.Name()})
	}
	sp := staticPool{pool: disruption.NodePool{Scheduling: scheduling.NodePool{Name: "fixed"}}, replicas: 1}
	plan := planStaticScaleDown(sp, claims, nodes, nil, now, 10, 10)
	require.Len(t, plan.picks, 2)
	// old-two: 3 × (10m/70m) ≈ 0.43; one: 2 × 1; young-two: 3 × 1.
	assert.Equal(t, []string{"old-two", "one"}, []string{plan.picks[0].node, plan.picks[1].node})
	assert.InDelta(t, 3.0/7, plan.picks[0].cost, 1e-9)

	sp.replicas = 3
	assert.Empty(t, planStaticScaleDown(sp, claims, nodes, nil, now, 10, 10).picks)
	sp.replicas = 0
	assert.Len(t, planStaticScaleDown(sp, claims, nodes, nil, now, 10, 2).picks, 2, "the run's bound")
}
