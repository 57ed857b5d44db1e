package scheduling_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// withExistingNodes adds to a random input existing nodes of its pools and unmanaged ones, in all
// zones, some tainted, some not initialized, with bound pods (some with host ports, some spread
// over zones softly or not, some with hostname anti-affinity, some in another namespace, some
// finished) and an in-flight claim; and pods to place with the same topology rules.
func withExistingNodes(in scheduling.Input, seed uint64) scheduling.Input {
	r := rand.New(rand.NewPCG(seed, 13))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelZone, WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
	hard := []corev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: scheduling.LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "hard"}}}}
	lonely := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		TopologyKey: scheduling.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "lonely"}}}}}}
	// together wants its pods in one zone, apart one pod per zone; tolerant spreads over hosts counting only the nodes its
	// tolerations allow.
	together := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		TopologyKey: scheduling.LabelZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "together"}}}}}}
	apart := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		TopologyKey: scheduling.LabelZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "apart"}}}}}}
	honor := corev1.NodeInclusionPolicyHonor
	tolerant := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
		NodeTaintsPolicy: &honor, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "tolerant"}}}}
	for i := range 5 + r.IntN(25) {
		name := fmt.Sprintf("node-%03d-%d", r.IntN(1000), i) // unique, in random order
		labels := map[string]string{scheduling.LabelZone: pick(Zones...), scheduling.LabelArch: pick("amd64", "arm64"), scheduling.LabelOS: "linux"}
		pool := ""
		if r.IntN(4) > 0 {
			pool = in.NodePools[r.IntN(len(in.NodePools))].Name
			labels[scheduling.LabelNodePool] = pool
		}
		o := NodeOptions{Name: name, Labels: labels, CPU: fmt.Sprint(2 + r.IntN(14)), Memory: fmt.Sprintf("%dGi", 4+r.IntN(60))}
		if r.IntN(4) == 0 {
			o.Taints = []corev1.Taint{{Key: "team", Value: pick("a", "b"), Effect: corev1.TaintEffectNoSchedule}}
		}
		n := scheduling.ExistingNode{Node: Node(o), NodePool: pool, Initialized: r.IntN(5) > 0}
		for j := range r.IntN(6) {
			po := PodOptions{Name: fmt.Sprintf("bound-%d-%d", i, j), CPU: fmt.Sprintf("%dm", 50+r.IntN(800)), Memory: fmt.Sprintf("%dMi", 64+r.IntN(2000)), NodeName: name}
			switch r.IntN(8) {
			case 0:
				po.HostPorts = []int32{8080}
			case 1:
				po.Labels, po.Spread = map[string]string{"app": "spread"}, spread
			case 2:
				po.Labels, po.Spread = map[string]string{"app": "hard"}, hard
			case 3:
				po.Labels = map[string]string{"app": "lonely"}
			case 4:
				po.Labels = map[string]string{"app": "together"}
			case 5:
				po.Labels, po.Spread = map[string]string{"app": "tolerant"}, tolerant
			case 6:
				po.Labels = map[string]string{"app": "apart"}
			}
			p := Pod(po)
			switch po.Labels["app"] {
			case "lonely":
				p.Spec.Affinity = lonely
			case "together":
				p.Spec.Affinity = together
			case "apart":
				p.Spec.Affinity = apart
			case "tolerant":
				p.Spec.Tolerations = []corev1.Toleration{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
			}
			if r.IntN(5) == 0 {
				p.Namespace = "other"
			}
			if r.IntN(8) == 0 {
				p.Status.Phase = corev1.PodSucceeded
			}
			n.Pods = append(n.Pods, p)
		}
		in.Nodes = append(in.Nodes, n)
	}
	if r.IntN(2) == 0 {
		in.InFlight = []scheduling.InFlightClaim{{Name: "inflight-1", NodePool: in.NodePools[0].Name,
			Labels:      map[string]string{scheduling.LabelZone: pick(Zones...), scheduling.LabelArch: "amd64"},
			Allocatable: scheduling.Resources{CPU: 4000, Memory: 8 << 30, Pods: 58}, Capacity: scheduling.Resources{CPU: 4000, Memory: 8 << 30, Pods: 58}}}
	}
	for i := range r.IntN(10) {
		in.Pods = append(in.Pods, Pod(PodOptions{Name: fmt.Sprintf("spread-%d", i), CPU: "300m", Memory: "300Mi", HostPorts: []int32{8080},
			Labels: map[string]string{"app": "spread"}, Spread: spread}))
	}
	for i := range r.IntN(8) {
		in.Pods = append(in.Pods, Pod(PodOptions{Name: fmt.Sprintf("hard-%d", i), CPU: "200m", Memory: "200Mi",
			Labels: map[string]string{"app": "hard"}, Spread: hard}))
	}
	for i := range r.IntN(6) {
		p := Pod(PodOptions{Name: fmt.Sprintf("lonely-%d", i), CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "lonely"}})
		if i%2 == 0 {
			p.Spec.Affinity = lonely // the others only match the anti-affinity of bound pods
		}
		in.Pods = append(in.Pods, p)
	}
	// Pending pods the bound pods' zone rules select: apart keeps them out of its owners' zones,
	// together draws its own pods to them, tolerant spreads them over the hosts.
	for i := range r.IntN(6) {
		app := pick("apart", "together", "tolerant")
		p := Pod(PodOptions{Name: fmt.Sprintf("%s-%d", app, i), CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": app}})
		switch app {
		case "together":
			p.Spec.Affinity = together
		case "tolerant":
			p.Spec.TopologySpreadConstraints = tolerant
			p.Spec.Tolerations = []corev1.Toleration{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}
		}
		in.Pods = append(in.Pods, p)
	}
	return in
}

// TestPreparedSolveMatchesSolve: Prepared.Solve gives, byte for byte, the plan Solve gives for the
// same pods and nodes, whatever nodes are left out, and a Prepared reused across solves is not
// changed by them (each solve below runs on the same Prepared, in a random order of leave-outs).
func TestPreparedSolveMatchesSolve(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			in, _ := withReservations(randomInput(seed), seed)
			in = withExistingNodes(in, seed)
			prepared := scheduling.Prepare(in)
			r := rand.New(rand.NewPCG(seed, 5))
			for round := range 4 {
				leaveOut := map[string]bool{}
				var nodes []scheduling.ExistingNode
				for _, n := range in.Nodes {
					if round > 0 && r.IntN(3) == 0 {
						leaveOut[n.Node.Name] = true
						continue
					}
					nodes = append(nodes, n)
				}
				pods := in.Pods[:r.IntN(len(in.Pods)+1)]
				want := in
				want.Pods, want.Nodes = pods, nodes
				wantPlan, err := scheduling.Solve(want)
				require.NoError(t, err)
				gotPlan, err := prepared.Solve(pods, leaveOut)
				require.NoError(t, err)
				wantJSON, err := json.Marshal(wantPlan)
				require.NoError(t, err)
				gotJSON, err := json.Marshal(gotPlan)
				require.NoError(t, err)
				require.Equal(t, string(wantJSON), string(gotJSON), "round %d, %d nodes left out", round, len(leaveOut))
			}
		})
	}
}

// TestPreparedSolveMatchesSolveWhateverTheMergeOrder: the solves of one Prepared, some of them
// running at once, open claims that take pods pinned to a zone, to an architecture, to both or to
// neither, in orders that change from solve to solve (pod classes go largest first, and the sizes
// change); each gives the plan Solve gives, though later solves reuse the claim states earlier ones
// stored (claimstates.go).
func TestPreparedSolveMatchesSolveWhateverTheMergeOrder(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 17))
			pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
			limited := NodePool("limited", Limits("cpu", fmt.Sprint(20+r.IntN(40))), Weight(10))
			in := withExistingNodes(scheduling.Input{NodePools: pools(limited, NodePool("default")), InstanceTypes: RealisticInstanceTypes()}, seed)
			topology := in.Pods // pods with spread and affinity rules, narrowed to a zone per claim
			prepared := scheduling.Prepare(in)
			podsOf := func(round int) []*corev1.Pod {
				var pods []*corev1.Pod
				for i := range 40 + r.IntN(40) {
					o := PodOptions{Name: fmt.Sprintf("p-%d-%d", round, i), CPU: fmt.Sprintf("%dm", 100*(1+r.IntN(30))), Memory: fmt.Sprintf("%dMi", 128*(1+r.IntN(30)))}
					if r.IntN(2) == 0 {
						o.NodeSelector = map[string]string{scheduling.LabelZone: pick(Zones...)}
					}
					if r.IntN(2) == 0 {
						o.NodeRequirements = []corev1.NodeSelectorRequirement{In(scheduling.LabelArch, pick("amd64", "arm64"))}
					}
					pods = append(pods, Pod(o))
				}
				return pods
			}
			rounds := make([][]*corev1.Pod, 6)
			want := make([]string, len(rounds))
			for i := range rounds {
				rounds[i] = append(podsOf(i), topology...)
				in := in
				in.Pods = rounds[i]
				plan, err := scheduling.Solve(in)
				require.NoError(t, err)
				data, err := json.Marshal(plan)
				require.NoError(t, err)
				want[i] = string(data)
			}
			for range 2 { // the second pass finds the states the first stored
				got, errs := make([]string, len(rounds)), make([]error, len(rounds))
				var wg sync.WaitGroup
				for i := range rounds {
					wg.Add(1)
					go func() {
						defer wg.Done()
						plan, err := prepared.Solve(rounds[i], nil)
						if err == nil {
							var data []byte
							data, err = json.Marshal(plan)
							got[i] = string(data)
						}
						errs[i] = err
					}()
				}
				wg.Wait()
				for i := range rounds {
					require.NoError(t, errs[i], "round %d", i)
					require.Equal(t, want[i], got[i], "round %d", i)
				}
			}
		})
	}
}

// TestPreparedSolveHonoursBoundAntiAffinity: a pod bound to a node with required hostname
// anti-affinity keeps a pod it selects (which has no rule of its own) off that node, in
// Prepared.Solve as in Solve.
func TestPreparedSolveHonoursBoundAntiAffinity(t *testing.T) {
	lonely := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		TopologyKey: scheduling.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "lonely"}}}}}}
	bound := Pod(PodOptions{Name: "bound", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "lonely"}, NodeName: "node-a"})
	bound.Spec.Affinity = lonely
	other := Pod(PodOptions{Name: "other", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "web"}, NodeName: "node-a"})
	follower := Pod(PodOptions{Name: "follower", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "lonely"}})
	in := scheduling.Input{
		Pods:          []*corev1.Pod{follower},
		Nodes:         []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "node-a", CPU: "4", Memory: "8Gi"}), Pods: []*corev1.Pod{other, bound}, NodePool: "default", Initialized: true}},
		NodePools:     pools(NodePool("default")),
		InstanceTypes: SmallCatalog(),
	}
	want, err := scheduling.Solve(in)
	require.NoError(t, err)
	got, err := scheduling.Prepare(in).Solve(in.Pods, nil)
	require.NoError(t, err)
	require.Empty(t, want.ExistingNodes, "the follower stays off node-a")
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	require.Equal(t, string(wantJSON), string(gotJSON))
}

// TestPreparedSolveForgetsTheOwnersItLeavesOut: a bound pod whose anti-affinity keeps the pods it
// selects out of its zone stops doing so once its node is left out, also when the same Prepared
// counted it in an earlier solve (another owner keeps the group alive).
func TestPreparedSolveForgetsTheOwnersItLeavesOut(t *testing.T) {
	apart := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		TopologyKey: scheduling.LabelZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "apart"}}}}}}
	owner := Pod(PodOptions{Name: "owner", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "apart"}, NodeName: "node-a"})
	owner.Spec.Affinity = apart
	// A second owner in another zone keeps the group in the solve that leaves node-a out.
	second := Pod(PodOptions{Name: "second", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "apart"}, NodeName: "node-c"})
	second.Spec.Affinity = apart
	follower := Pod(PodOptions{Name: "follower", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "apart"}})
	zone := map[string]string{scheduling.LabelZone: Zones[0]}
	in := scheduling.Input{
		Pods: []*corev1.Pod{follower},
		Nodes: []scheduling.ExistingNode{
			{Node: Node(NodeOptions{Name: "node-a", CPU: "4", Memory: "8Gi", Labels: zone}), Pods: []*corev1.Pod{owner}, NodePool: "default", Initialized: true},
			{Node: Node(NodeOptions{Name: "node-b", CPU: "4", Memory: "8Gi", Labels: zone}), NodePool: "default", Initialized: true},
			{Node: Node(NodeOptions{Name: "node-c", CPU: "4", Memory: "8Gi", Labels: map[string]string{scheduling.LabelZone: Zones[1]}}),
				Pods: []*corev1.Pod{second}, NodePool: "default", Initialized: true},
		},
		NodePools:     pools(NodePool("default")),
		InstanceTypes: SmallCatalog(),
	}
	prepared := scheduling.Prepare(in)
	blocked, err := prepared.Solve(in.Pods, nil)
	require.NoError(t, err)
	require.Empty(t, blocked.ExistingNodes, "the owner keeps the follower out of its zone")
	got, err := prepared.Solve(in.Pods, map[string]bool{"node-a": true})
	require.NoError(t, err)
	require.Len(t, got.ExistingNodes, 1, "with the owner's node left out, node-b takes the follower")
	require.Equal(t, "node-b", got.ExistingNodes[0].Name)
}

// TestPreparedSolveForgetsTheDomainsItLeavesOut: a domain only a left-out node has is no domain
// of the solve, also when the same Prepared saw it in an earlier solve. Here a spread over racks
// would otherwise count the empty rack of the left-out node and refuse the follower.
func TestPreparedSolveForgetsTheDomainsItLeavesOut(t *testing.T) {
	const rack = "example.com/rack"
	spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: rack, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "racked"}}}}
	bound := Pod(PodOptions{Name: "bound", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "racked"}, NodeName: "node-b", Spread: spread})
	follower := Pod(PodOptions{Name: "follower", CPU: "100m", Memory: "100Mi", Labels: map[string]string{"app": "racked"}, Spread: spread})
	in := scheduling.Input{
		Pods: []*corev1.Pod{follower},
		Nodes: []scheduling.ExistingNode{
			{Node: Node(NodeOptions{Name: "node-a", CPU: "4", Memory: "8Gi", Labels: map[string]string{rack: "a"}}), NodePool: "default", Initialized: true},
			{Node: Node(NodeOptions{Name: "node-b", CPU: "4", Memory: "8Gi", Labels: map[string]string{rack: "b"}}), Pods: []*corev1.Pod{bound}, NodePool: "default", Initialized: true},
		},
		NodePools:     pools(NodePool("default")),
		InstanceTypes: SmallCatalog(),
	}
	prepared := scheduling.Prepare(in)
	both, err := prepared.Solve(in.Pods, nil)
	require.NoError(t, err)
	require.Len(t, both.ExistingNodes, 1)
	require.Equal(t, "node-a", both.ExistingNodes[0].Name, "rack a is the emptier")
	got, err := prepared.Solve(in.Pods, map[string]bool{"node-a": true})
	require.NoError(t, err)
	want := in
	want.Nodes = in.Nodes[1:]
	wantPlan, err := scheduling.Solve(want)
	require.NoError(t, err)
	wantJSON, _ := json.Marshal(wantPlan)
	gotJSON, _ := json.Marshal(got)
	require.Equal(t, string(wantJSON), string(gotJSON))
	require.Len(t, got.ExistingNodes, 1, "with node-a left out, rack b is the only rack")
}
