package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/testsupport/hardcluster"
)

// fragmentedCluster is a generated cluster written to files, with what the benchmark reports.
type fragmentedCluster struct {
	files               disruptFiles
	nodes, packed, left int
	// remainingPendingPods are the pods left on Nodewright's nodes, unbound, for the LP bound;
	// movablePendingPods the same without the pods of pinned nodes (do-not-disrupt, or running a
	// PDB-guarded pod), which cost pinnedPrice whatever consolidation does.
	remainingPendingPods, movablePendingPods string
	pinnedPrice                              float64
}

// catalogEntries reads testdata/disrupt's catalog for the generator.
func catalogEntries(tb testing.TB) map[string]catalogEntry {
	tb.Helper()
	data, err := os.ReadFile(disruptFile("instance-types.json"))
	require.NoError(tb, err)
	var entries []catalogEntry
	require.NoError(tb, json.Unmarshal(data, &entries))
	out := map[string]catalogEntry{}
	for _, e := range entries {
		out[e.Name] = e
	}
	return out
}

// writeFragmented generates a packed cluster of n nodes from seed (hardcluster.NodePools is its
// NodePool) and deletes removed of its pods at random: mostly m5/c5.2xlarge and r5.xlarge nodes, half spot, a tenth oversized on-demand
// m5.4xlarge, over two zones; about 20 pods per node (at most 30) from 50 deployments of random
// shapes, with spread every fifth deployment spread over zones (ScheduleAnyway); on every 25th node a pod of a deployment whose PDB
// allows no disruption (never deleted); every 50th node annotated do-not-disrupt and every 100th
// not Nodewright's. With fewPins, as the issue words it ("a PDB that allows no disruption, a few
// nodes that are not candidates"), only 5 nodes carry a PDB-guarded pod and 5 are annotated
// do-not-disrupt (every n/5th node), instead of 6% of the nodes pinned. Everything comes from the
// seed.
func writeFragmented(tb testing.TB, n int, removed float64, seed uint64, spread bool, fewPins ...bool) fragmentedCluster {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0xd15c))
	catalog := catalogEntries(tb)
	type shape struct{ cpu, mem int64 }
	shapes := make([]shape, 50)
	for i := range shapes {
		shapes[i] = shape{cpu: 100 + 25*r.Int64N(14), mem: 128 << 20 * (1 + r.Int64N(12))}
	}
	zones := []string{"us-east-1a", "us-east-1b"}
	const dsCPU, dsMem = 100, 128 << 20
	nodes := corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}}
	pods := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	pending := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	movable := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	c := fragmentedCluster{nodes: n}
	podID := 0
	for i := range n {
		itype := []string{"m5.2xlarge", "c5.2xlarge", "r5.xlarge"}[r.IntN(3)]
		ct := scheduling.CapacityTypeOnDemand
		if r.IntN(2) == 0 {
			ct = scheduling.CapacityTypeSpot
		}
		if r.IntN(10) == 0 {
			itype, ct = "m5.4xlarge", scheduling.CapacityTypeOnDemand
		}
		zone := zones[r.IntN(len(zones))]
		e := catalog[itype]
		name := fmt.Sprintf("node-%05d", i)
		ours := i%100 != 99
		guarded, doNotDisrupt := i%25 == 12, i%50 == 49
		if len(fewPins) > 0 && fewPins[0] {
			guarded, doNotDisrupt = i%max(n/5, 50) == 12, i%max(n/5, 50) == 49
		}
		pinned := ours && (doNotDisrupt || guarded)
		if pinned {
			for _, o := range e.Offerings {
				if o.Zone == zone && o.CapacityType == ct {
					c.pinnedPrice += o.Price
				}
			}
		}
		unbound := func(p corev1.Pod) {
			if !ours {
				return
			}
			q := p.DeepCopy()
			q.Spec.NodeName = ""
			pending.Items = append(pending.Items, *q)
			if !pinned {
				movable.Items = append(movable.Items, *q)
			}
		}
		labels := map[string]string{
			scheduling.LabelInstanceType: itype, scheduling.LabelZone: zone, scheduling.LabelCapacityType: ct,
			scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux", scheduling.LabelHostname: name,
		}
		if ours {
			labels[scheduling.LabelNodePool] = "default"
			labels[scheduling.LabelNodeInitalized] = "true"
		}
		node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if doNotDisrupt {
			node.Annotations = map[string]string{"karpenter.sh/do-not-disrupt": "true"}
		}
		alloc := corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(e.Allocatable.CPUMillis, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(e.Allocatable.MemoryMiB<<20, resource.BinarySI),
			corev1.ResourcePods:   *resource.NewQuantity(58, resource.DecimalSI),
		}
		node.Status.Allocatable, node.Status.Capacity = alloc, alloc
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		nodes.Items = append(nodes.Items, node)
		pods.Items = append(pods.Items, fragmentedPod("kube-system", "node-agent-"+name, name, "node-agent", "DaemonSet", dsCPU, dsMem, false))
		free := shape{cpu: e.Allocatable.CPUMillis - dsCPU, mem: e.Allocatable.MemoryMiB<<20 - dsMem}
		if guarded {
			// one pod of the deployment whose PDB allows no disruption, never deleted
			p := fragmentedPod("default", fmt.Sprintf("guarded-%05d", i), name, "guarded", "ReplicaSet", 200, 256<<20, false)
			pods.Items = append(pods.Items, p)
			free.cpu -= 200
			free.mem -= 256 << 20
			c.packed++
			c.left++
			unbound(p)
		}
		placed := 0
		for range 120 {
			if placed >= 30 {
				break
			}
			k := r.IntN(len(shapes))
			s := shapes[k]
			if s.cpu > free.cpu || s.mem > free.mem {
				continue
			}
			free.cpu -= s.cpu
			free.mem -= s.mem
			placed++
			c.packed++
			podID++
			if r.Float64() < removed {
				continue
			}
			c.left++
			app := fmt.Sprintf("app-%02d", k)
			p := fragmentedPod("default", fmt.Sprintf("%s-%06d", app, podID), name, app, "ReplicaSet", s.cpu, s.mem, spread && k%5 == 0)
			pods.Items = append(pods.Items, p)
			unbound(p)
		}
	}
	dir := tb.TempDir()
	write := func(name string, v any) string {
		path := filepath.Join(dir, name)
		data, err := json.Marshal(v)
		require.NoError(tb, err)
		require.NoError(tb, os.WriteFile(path, data, 0o644))
		return path
	}
	zero := intstr.FromInt32(0)
	pdbs := policyv1.PodDisruptionBudgetList{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudgetList"},
		Items: []policyv1.PodDisruptionBudget{{
			ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: "default"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
			Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0},
		}}}
	pools := filepath.Join(dir, "nodepools.yaml")
	require.NoError(tb, os.WriteFile(pools, []byte(hardcluster.NodePools), 0o644))
	c.files = disruptFiles{
		pods: write("pods.json", pods), nodes: write("nodes.json", nodes), pdbs: write("pdbs.json", pdbs),
		nodePools: pools, catalog: disruptFile("instance-types.json"), daemonSets: disruptFile("daemonsets.yaml"),
	}
	c.remainingPendingPods = write("pending.json", pending)
	c.movablePendingPods = write("movable.json", movable)
	return c
}

func fragmentedPod(ns, name, node, app, ownerKind string, cpu, mem int64, spread bool) corev1.Pod {
	yes := true
	p := corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: app, UID: types.UID("uid-" + app), Controller: &yes}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(mem, resource.BinarySI),
			}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if spread {
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}}
	}
	return p
}

// lowerBound is the LP lower bound of the price of pods (a file of pods left on Nodewright's
// nodes): the plan of those pods, all pending, against an empty cluster with the same NodePool,
// catalog and DaemonSets.
func (c fragmentedCluster) lowerBound(tb testing.TB, pods string) float64 {
	tb.Helper()
	return planLowerBound(tb, c.files, pods)
}

// planLowerBound is the LP lower bound of the price of pods (a file of pending pods) planned against
// an empty cluster with the NodePools, catalog and DaemonSets of files.
func planLowerBound(tb testing.TB, files disruptFiles, pods string) float64 {
	tb.Helper()
	objs, problems := manifest.Check(nil, files.nodePools)
	require.Empty(tb, problems)
	in, err := planInput(planFlags{pods: pods, nodePools: files.nodePools, instanceTypes: files.catalog,
		daemonSets: files.daemonSets}, objs, func(string) {})
	require.NoError(tb, err)
	plan, err := scheduling.Solve(*in)
	require.NoError(tb, err)
	require.Empty(tb, plan.Unschedulable)
	return plan.LowerBound
}

// TestPlanDisruptGeneratedCluster holds the dry run of a generated fragmented cluster to the
// contract: several ticks under the 10% budget, replacements, a PDB and do-not-disrupt nodes.
func TestPlanDisruptGeneratedCluster(t *testing.T) {
	c := writeFragmented(t, 60, 0.6, 7, true)
	out := runDisruptJSON(t, c.files)
	violations, sum, err := checkDisruptContract(c.files, out)
	require.NoError(t, err)
	assert.Empty(t, violations)
	assert.Greater(t, sum.ticks, 1, "a 10% budget spreads the work over ticks")
	assert.NotEmpty(t, sum.disrupted)
	var doc contractDoc
	require.NoError(t, json.Unmarshal(out, &doc))
	assert.Less(t, *doc.CostAfterPerHour, *doc.CostBeforePerHour)
	reasons := ""
	for _, r := range sum.kept {
		reasons += r + "\n"
	}
	assert.Contains(t, reasons, "karpenter.sh/do-not-disrupt annotation")
}

// BenchmarkPlanDisrupt runs the whole dry run (reading the files, the sequence of ticks, the JSON)
// on generated fragmented clusters (writeFragmented: 60% of the pods deleted; spread=false drops the
// zone spreads, which lets every simulation fold bound pods into allocatable, see disruption's
// compact.go) and reports the
// sequence's time (solve-s, as the command measures it), commands, ticks, the peak heap sampled
// during the run, and the cost after against the LP lower bound of the pods left (after/bound), and
// against the price of the pinned nodes plus the bound of the other pods (after/pinned+bound). The output is held
// to the contract. pins=few are the clusters with 5 PDB-guarded and 5 do-not-disrupt nodes
// (writeFragmented's fewPins), as the wording has them; the others pin 6% of the nodes.
func BenchmarkPlanDisrupt(b *testing.B) {
	cases := []struct {
		nodes                       int
		spread, spotToSpot, fewPins bool
	}{{250, true, false, false}, {250, true, true, false}, {2000, true, false, false}, {2000, false, false, false},
		{250, true, false, true}, {2000, true, false, true}, {2000, false, false, true}, {2000, true, true, true}}
	for _, tc := range cases {
		name := fmt.Sprintf("nodes=%d/spread=%v/spot-to-spot=%v", tc.nodes, tc.spread, tc.spotToSpot)
		if tc.fewPins {
			name += "/pins=few"
		}
		b.Run(name, func(b *testing.B) {
			c := writeFragmented(b, tc.nodes, 0.6, 42, tc.spread, tc.fewPins)
			lb := c.lowerBound(b, c.remainingPendingPods)
			// The best any consolidation can do while pinned nodes stay: their price plus the bound of
			// every other pod.
			pinnedLB := c.pinnedPrice + c.lowerBound(b, c.movablePendingPods)
			runDisruptBench(b, c.files, tc.spotToSpot, lb, pinnedLB)
			b.ReportMetric(float64(c.packed), "pods-packed")
			b.ReportMetric(float64(c.left), "pods-left")
		})
	}
}

// runDisruptBench runs the dry run of files in the benchmark loop and reports its sequence's
// median time (solve-s), commands, ticks, costs against the bounds, and the peak heap; the output is
// held to the contract.
func runDisruptBench(b *testing.B, files disruptFiles, spotToSpot bool, lb, pinnedLB float64) {
	b.Helper()
	extra := []string{"-o", "json"}
	if spotToSpot {
		extra = append(extra, "--spot-to-spot")
	}
	args := append([]string{"plan"}, files.args(extra...)...)
	var out bytes.Buffer
	var solve []float64
	var peak uint64
	for b.Loop() {
		out.Reset()
		var errOut bytes.Buffer
		runtime.GC()
		stop := sampleHeap(&peak)
		code := dispatch(args, strings.NewReader(""), &out, &errOut)
		stop()
		if code != 0 {
			b.Fatalf("exit %d: %s", code, errOut.String())
		}
		var doc contractDoc
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			b.Fatal(err)
		}
		solve = append(solve, *doc.SolveSeconds)
		ticks := 0
		for _, cmd := range doc.Commands {
			ticks = max(ticks, cmd.Tick)
		}
		b.ReportMetric(float64(len(doc.Commands)), "commands")
		b.ReportMetric(float64(ticks), "ticks")
		b.ReportMetric(*doc.CostBeforePerHour, "cost-before-$/h")
		b.ReportMetric(*doc.CostAfterPerHour, "cost-after-$/h")
		b.ReportMetric(lb, "lower-bound-$/h")
		b.ReportMetric(*doc.CostAfterPerHour/lb, "after/bound")
		b.ReportMetric(*doc.CostAfterPerHour/pinnedLB, "after/pinned+bound")
	}
	b.StopTimer()
	slices.Sort(solve)
	b.ReportMetric(solve[len(solve)/2], "solve-s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	violations, _, err := checkDisruptContract(files, out.Bytes())
	if err != nil || len(violations) > 0 {
		b.Fatalf("contract: %v %v", err, violations)
	}
}

// sampleHeap records the largest HeapInuse seen every 20ms into peak until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for !done.Load() {
			runtime.ReadMemStats(&m)
			*peak = max(*peak, m.HeapInuse)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}
