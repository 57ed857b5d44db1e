package disruption_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestDeterministic decides on a fragmented cluster (with pending pods, PDBs, a second pool and
// nodes kept for several reasons) and on shuffled copies of it: the results are identical.
func TestDeterministic(t *testing.T) {
	in := fragmented(40, 20, 0.6, 7)
	in.NodePools = append(in.NodePools, pool("arm", budgets(disruption.Budget{Nodes: "2"}),
		func(p *disruption.NodePool) {
			schedulingtest.Requirement(scheduling.LabelArch, scheduling.OpIn, "arm64")(&p.Scheduling)
		}))
	in.PendingPods = []*corev1.Pod{pod("pending-a", "500m"), pod("pending-b", "250m"), pod("pending-c", "1")}
	in.PDBs = []*policyv1.PodDisruptionBudget{pdb("app-03", "app-03", 0), pdb("app-07", "app-07", 1), pdb("app-07b", "app-07", 1)}
	in.Nodes[3].Disrupting = true
	in.Nodes[5].Initialized = false
	in.Nodes[8].Node.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}

	want := disruption.Decide(in)
	require.Len(t, want.Commands, 1, "the fixture must make a decision for the comparison to mean something")
	assert.NotEmpty(t, want.Kept)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	for seed := range uint64(5) {
		got := disruption.Decide(shuffled(in, seed+100))
		gotJSON, err := json.Marshal(got)
		require.NoError(t, err)
		assert.JSONEq(t, string(wantJSON), string(gotJSON), "shuffle seed %d", seed)
	}
}

// TestInputNotModified: Decide leaves its input as it found it.
func TestInputNotModified(t *testing.T) {
	in := fragmented(20, 10, 0.6, 3)
	in.PendingPods = []*corev1.Pod{pod("pending", "1")}
	before, err := json.Marshal([]any{in.Nodes, in.PendingPods, in.NodePools})
	require.NoError(t, err)
	disruption.Decide(in)
	after, err := json.Marshal([]any{in.Nodes, in.PendingPods, in.NodePools})
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after))
}

// TestCommandsFit applies the command Decide finds on fragmented clusters and checks the result
// independently: every pod of a removed node has a destination that is neither removed nor
// disrupting, every destination's requests stay within its allocatable CPU and memory, the
// replacement's pods fit its instance type, and the savings are what the prices say.
func TestCommandsFit(t *testing.T) {
	for seed := range uint64(3) {
		in := fragmented(150, 20, 0.6, seed)
		in.NodePools[0].Budgets = []disruption.Budget{{Nodes: "100%"}}
		res := disruption.Decide(in)
		require.Len(t, res.Commands, 1, "seed %d", seed)
		cmd := res.Commands[0]
		removed := map[string]bool{}
		total := 0.0
		for _, n := range cmd.Nodes {
			removed[n.Name] = true
			total += n.PricePerHour
		}
		used := map[string]scheduling.Resources{}
		alloc := map[string]scheduling.Resources{}
		podsByKey := map[string]*corev1.Pod{}
		moving := 0
		for _, n := range in.Nodes {
			alloc[n.Name()] = scheduling.ResourcesFromList(n.Node.Status.Allocatable)
			for _, p := range n.Pods {
				podsByKey[p.Namespace+"/"+p.Name] = p
				if removed[n.Name()] {
					moving++
				} else {
					used[n.Name()] = used[n.Name()].Add(scheduling.PodRequests(p))
				}
			}
		}
		assert.Len(t, cmd.Moves, moving, "seed %d: every pod of a removed node moves", seed)
		price := 0.0
		for _, r := range cmd.Replacements {
			price += r.Price
			for _, it := range in.InstanceTypes {
				if it.Name == r.InstanceType {
					alloc[r.Name] = it.Allocatable
				}
			}
		}
		assert.Less(t, len(cmd.Replacements), max(2, len(cmd.Nodes)), "seed %d: fewer replacements than nodes", seed)
		for _, m := range cmd.Moves {
			assert.False(t, removed[m.To], "seed %d: %s moves to removed node %s", seed, m.Pod, m.To)
			_, known := alloc[m.To]
			require.True(t, known, "seed %d: %s moves to unknown %s", seed, m.Pod, m.To)
			used[m.To] = used[m.To].Add(scheduling.PodRequests(podsByKey[m.Pod]))
		}
		for name, u := range used {
			assert.LessOrEqual(t, u.CPU, alloc[name].CPU, "seed %d: %s CPU", seed, name)
			assert.LessOrEqual(t, u.Memory, alloc[name].Memory, "seed %d: %s memory", seed, name)
		}
		assert.Less(t, price, total)
		assert.InDelta(t, total-price, cmd.SavingsPerHour, 1e-9)
	}
}

// TestCompactSimulationIsExact: folding bound pods into their node's allocatable (done when no pod
// has topology rules) decides exactly as simulating with every pod, including with DaemonSet and
// host-port pods, pending pods, a disrupting node and pinned pods.
func TestCompactSimulationIsExact(t *testing.T) {
	for seed := range uint64(4) {
		for _, budget := range []string{"10%", "100%"} {
			in := fragmented(60, 20, 0.6, seed)
			in.NodePools[0].Budgets = []disruption.Budget{{Nodes: budget}}
			in.PendingPods = []*corev1.Pod{pod("pending-a", "2"), pod("pending-b", "500m")}
			in.Nodes[1].Disrupting = true
			// A DaemonSet running on every node but one (whose daemon is still to come), and a
			// host-port deployment on every other node.
			ds := schedulingtest.DaemonSet("ds", "300m", "256Mi")
			in.DaemonSets = append(in.DaemonSets, ds)
			for i := range in.Nodes {
				n := &in.Nodes[i]
				if i != 2 {
					dp := schedulingtest.Pod(schedulingtest.PodOptions{Name: fmt.Sprintf("ds-%d", i), Namespace: "kube-system", CPU: "300m", Memory: "256Mi", NodeName: n.Name()})
					yes := true
					dp.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: &yes}}
					n.Pods = append(n.Pods, dp)
				}
				if i%2 == 0 {
					hp := schedulingtest.Pod(schedulingtest.PodOptions{Name: fmt.Sprintf("hostport-%d", i), Owner: "hostport", CPU: "100m", HostPorts: []int32{8080}, NodeName: n.Name()})
					n.Pods = append(n.Pods, hp)
				}
			}
			if seed%2 == 1 {
				pinOnePodPerNode(in)
			}
			compact := disruption.Decide(in)
			full := disruption.Decide(disruption.WithFullSimulation(in))
			a, err := json.Marshal(compact)
			require.NoError(t, err)
			b, err := json.Marshal(full)
			require.NoError(t, err)
			assert.JSONEq(t, string(b), string(a), "seed %d budget %s", seed, budget)
			if len(compact.Commands) == 1 {
				assert.NoError(t, disruption.Validate(compact.Commands[0], in))
				assert.NoError(t, disruption.Validate(compact.Commands[0], disruption.WithFullSimulation(in)))
			}
		}
	}
}
