package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/apis"
	"github.com/nodewright/nodewright/shared/consolidation"
	"github.com/nodewright/nodewright/shared/disruption"
	"github.com/nodewright/nodewright/shared/instance"
	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/kubetest"
	"github.com/nodewright/nodewright/shared/scheduling"
	"github.com/nodewright/nodewright/shared/state"
	"github.com/nodewright/nodewright/shared/termination"
)

// The large cluster of issue #13's target "one disruption run over that cluster, with the real adapters
// against moto and the local API server: a decision in ≤ 15 s". Its size is NW_BENCH_NODES (default
// 2000) nodes of ~20 pods each before 60% of the pods are removed.
const (
	benchSeed1, benchSeed2 = 2026, 13
	// benchRemoved is the share of the packed cluster's pods removed at random.
	benchRemoved = 0.6
	benchApps    = 36
	// benchFunctionTimeout is the disruption function's timeout (infra/disruption.go): the run's deadline.
	benchFunctionTimeout = 180 * time.Second
	benchWorkers         = 32
)

// benchZones are the zones newWorld's subnets are in.
var benchZones = []string{"us-east-1a", "us-east-1b"}

// benchShape is a node size of the generated cluster and how often it is drawn.
type benchShape struct {
	itype  string
	weight int
}

var benchShapes = []benchShape{
	{"m5.large", 20}, {"m5.xlarge", 25}, {"c5.xlarge", 15}, {"r5.large", 10},
	{"m5.2xlarge", 15}, {"c5.2xlarge", 10}, {"m5.4xlarge", 5},
}

// benchOversized is the instance type whose nodes are left mostly empty (oversized for their pods).
const benchOversized = "m5.4xlarge"

// largeCluster is a generated cluster, seeded once per test binary and reused by every invocation
// of the benchmark (-count): seeding 2,000 nodes takes about a minute.
type largeCluster struct {
	// w is the AWS side (moto) of the next run; ns is the namespace of the cluster's pods, whose Nodes
	// are labelled e2e=ns.
	w            *world
	ns           string
	used         bool                 // w has served a run: the next one needs a fresh moto
	client       kubernetes.Interface // unthrottled, for seeding and restoring
	claimRecords []state.Claim
	nodes        []*corev1.Node
	pods         []*corev1.Pod
	before       int // pods before the removal
	claims       int
	took         time.Duration
	counts       map[string]int
}

var large struct {
	once sync.Once
	c    *largeCluster
	err  error
}

// keepTB hands newWorld a TB whose cleanups are dropped: the world outlives the first invocation of the
// benchmark, and the control plane and moto it lives in stop with the test binary.
type keepTB struct{ testing.TB }

func (keepTB) Cleanup(func()) {}

// BenchmarkDisruptionRunLargeCluster times one disruption run (consolidation.Runner.Run) over a
// fragmented cluster of NW_BENCH_NODES nodes (default 2000) and ~20 pods per node of which 60% were
// removed, with the real adapters: the local kube-apiserver (snapshot, taints, events), moto (the state
// table in DynamoDB, the EC2 catalog and launches, the termination queue) and the provisioner's launch
// path. The run's context has the disruption function's 180 s deadline, so the search is bounded as in
// Lambda, and its ValidationDelay is none: the 15 s wait before re-checking a decision is a deliberate
// delay, not decision time.
//
// Metrics: decision-s is from the start of Run until the engine's decision is made (advance, the
// complete read, Decide); run-s is the whole Run (with the validation read and the execution);
// decide-s is Decide alone (Report.Evaluation); snapshot-s, claims-s, commands-s, config-s and
// catalog-s sum each kind of read before the decision (the runner's advance and its read both read the
// cluster, claims and commands); exec-*-s sum the execution's ledger reservations, taints and
// termination requests. The cluster is seeded once per test binary (not timed); after each run its
// taints are lifted and moto is set up afresh (not timed), so every run sees the same cluster; the first
// run finds the provisioner's catalog warm (seeding read it), later ones read it cold. Only the pods
// that survive the removal are created: the API server holds what it would after the deletions.
//
//	CI=true go test ./shared/consolidation/e2e -run '^$' -bench BenchmarkDisruptionRunLargeCluster -benchtime=1x -count=3 -timeout 30m
func BenchmarkDisruptionRunLargeCluster(b *testing.B) {
	n := 2000
	if v := os.Getenv("NW_BENCH_NODES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			b.Fatalf("NW_BENCH_NODES=%q: want a number of nodes ≥ 10", v)
		}
	}
	large.once.Do(func() {
		start := time.Now()
		large.c, large.err = seedLargeCluster(b, n)
		if large.c != nil {
			large.c.took = time.Since(start)
		}
	})
	if large.err != nil {
		b.Fatalf("seeding the cluster: %v", large.err)
	}
	lc := large.c
	b.Logf("cluster: %d nodes (%v), %d pods (%d before removing %.0f%%), %d claims; seeded in %s",
		len(lc.nodes), lc.counts, len(lc.pods), lc.before, benchRemoved*100, lc.claims, lc.took.Round(time.Second))

	var rep consolidation.Report
	var tm *timings
	var runTook time.Duration
	var peak uint64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		if err := lc.freshAWS(b); err != nil {
			b.Fatalf("setting moto up again: %v", err)
		}
		runtime.GC()
		tm = &timings{}
		r := lc.runner(tm)
		stop := sampleHeap(&peak)
		ctx, cancel := context.WithTimeout(context.Background(), benchFunctionTimeout)
		b.StartTimer()
		tm.start = time.Now()
		var err error
		rep, err = r.Run(ctx, fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i))
		runTook = time.Since(tm.start)
		b.StopTimer()
		cancel()
		stop()
		if err != nil {
			b.Fatalf("run: %v", err)
		}
		if !rep.Lease {
			b.Fatal("the run did not get the lease")
		}
		if err := lc.restore(); err != nil {
			b.Fatalf("undoing the run's command: %v", err)
		}
		b.StartTimer()
	}
	b.StopTimer()

	decision := tm.decision(runTook, rep.Evaluation)
	b.ReportMetric(decision.Seconds(), "decision-s")
	b.ReportMetric(runTook.Seconds(), "run-s")
	b.ReportMetric(rep.Evaluation.Seconds(), "decide-s")
	for _, p := range tm.phases() {
		b.ReportMetric(p.took.Seconds(), p.name+"-s")
	}
	var execution []string
	for _, name := range []string{"reserve", "taint", "terminate"} {
		took, n := tm.total(name)
		b.ReportMetric(took.Seconds(), "exec-"+name+"-s")
		execution = append(execution, fmt.Sprintf("%d %s calls %s", n, name, took.Round(time.Millisecond)))
	}
	b.Logf("execution: %s", strings.Join(execution, ", "))
	b.ReportMetric(float64(len(lc.nodes)), "nodes")
	b.ReportMetric(float64(len(lc.pods)), "pods")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	removed := 0
	for _, c := range rep.Commands {
		removed += len(c.Nodes)
	}
	b.ReportMetric(float64(removed), "removed-nodes")
	b.Logf("decision %s (Decide %s), run %s; calls: %s", decision.Round(time.Millisecond), rep.Evaluation.Round(time.Millisecond),
		runTook.Round(time.Millisecond), tm)
	for _, c := range rep.Commands {
		b.Logf("command: %s %s/%s of %d nodes, %d replacements, saves $%.3f/h: %s", c.Action, c.Reason, c.Method,
			len(c.Nodes), len(c.Replacements), c.SavingsPerHour, c.Why)
	}
	b.Logf("skipped=%q rejected=%v eligible=%v allowed=%v budgetBlocked=%v errors=%d", rep.Skipped, rep.Rejected,
		rep.EligibleNodes, rep.Allowed, rep.BudgetBlocked, len(rep.Errors))
	for i, e := range rep.Errors {
		if i == 5 {
			b.Logf("... %d more errors", len(rep.Errors)-5)
			break
		}
		b.Logf("error: %s", e)
	}
	if len(rep.Commands) == 0 && rep.Skipped != "" {
		b.Fatalf("the run decided nothing: %s", rep.Skipped)
	}
}

// runner wires a consolidation runner as functions/disruption does (the default configuration but for
// the validation delay and one command), with its reads timed, over this cluster's Nodes and pods.
func (lc *largeCluster) runner(tm *timings) *consolidation.Runner {
	w := lc.w
	lc.used = true
	snap := kube.NewSnapshotter(w.client, kube.SnapshotOptions{Namespace: lc.ns, NodeSelector: "e2e=" + lc.ns})
	return consolidation.New(consolidation.Config{ValidationDelay: -1, MaxCommands: 1},
		consolidation.Deps{
			Store:        timedStore{Store: w.store, tm: tm},
			Cluster:      timedCluster{r: snap, tm: tm},
			Launcher:     timedLauncher{Launcher: consolidation.ProvisionerLauncher{P: w.prov}, tm: tm},
			Nodes:        timedNodes{NodeActions: kube.NewActions(w.client), tm: tm},
			Terminations: timedTerminations{Terminations: termination.NewSender(w.sqs, w.queueURL), tm: tm},
			Events:       kube.NewRecorder(w.client, kube.RecorderOptions{Instance: "disruption-bench"}),
			Now:          time.Now,
		})
}

// restore lifts the karpenter.sh/disrupted taints a run left in the API server. What it wrote in moto
// (ledger, command, replacement claim and instance) is dropped with moto itself before the next run
// (freshAWS).
func (lc *largeCluster) restore() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nodes, err := lc.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "e2e=" + lc.ns})
	if err != nil {
		return err
	}
	var tainted []string
	for _, n := range nodes.Items {
		if slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&apis.DisruptedNoScheduleTaint) }) {
			tainted = append(tainted, n.Name)
		}
	}
	actions := kube.NewActions(lc.client)
	return parallel(ctx, len(tainted), func(ctx context.Context, i int) error {
		return actions.Untaint(ctx, tainted[i], apis.DisruptedNoScheduleTaint)
	})
}

// freshAWS gives the next run a moto of its own: moto is reset and set up again (network, image, state
// table with the NodePool, queue) and the claims recorded again. moto copies the whole table for each
// item of a DynamoDB transaction and keeps growing by gigabytes over the hundreds of ledger transactions
// a run executing a 200-node command makes; a reset frees that.
func (lc *largeCluster) freshAWS(b *testing.B) error {
	if !lc.used {
		return nil
	}
	lc.w = newWorld(keepTB{b}, "10%")
	lc.used = false
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return parallel(ctx, len(lc.claimRecords), func(ctx context.Context, i int) error {
		_, err := lc.w.store.CreateClaim(ctx, lc.claimRecords[i])
		return err
	})
}

// seedLargeCluster builds the world (moto, the state table with a NodePool whose budget is 10%, the
// local API server) and creates the generated cluster in it.
func seedLargeCluster(b *testing.B, n int) (*largeCluster, error) {
	w := newWorld(keepTB{b}, "10%")
	cfg := kube.Tuned(kubetest.Shared(b, kubetest.Options{}).Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit while seeding
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	l, err := w.prov.PrepareLaunches(ctx)
	if err != nil {
		return nil, err
	}
	catalog := map[string]*scheduling.InstanceType{}
	for _, p := range l.Pools {
		for _, it := range p.InstanceTypes {
			catalog[it.Name] = it
		}
	}
	lc := &largeCluster{w: w, ns: w.ns, client: client, counts: map[string]int{}}
	gen, err := generateCluster(w.ns, n, catalog)
	if err != nil {
		return nil, err
	}
	lc.nodes, lc.pods, lc.before = gen.nodes, gen.pods, gen.before
	for _, nd := range gen.nodes {
		lc.counts[nd.Labels[scheduling.LabelCapacityType]]++
	}
	lc.counts["do-not-disrupt"] = gen.pinned

	start := time.Now()
	if err := parallel(ctx, len(gen.nodes), func(ctx context.Context, i int) error {
		return createNode(ctx, client, gen.nodes[i])
	}); err != nil {
		return nil, fmt.Errorf("creating nodes: %w", err)
	}
	b.Logf("created %d nodes in %s", len(gen.nodes), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := parallel(ctx, len(gen.claims), func(ctx context.Context, i int) error {
		_, err := w.store.CreateClaim(ctx, gen.claims[i])
		return err
	}); err != nil {
		return nil, fmt.Errorf("recording claims: %w", err)
	}
	lc.claims, lc.claimRecords = len(gen.claims), gen.claims
	b.Logf("recorded %d claims in %s", len(gen.claims), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if err := parallel(ctx, len(gen.pods), func(ctx context.Context, i int) error {
		return createPod(ctx, client, gen.pods[i])
	}); err != nil {
		return nil, fmt.Errorf("creating pods: %w", err)
	}
	b.Logf("created %d pods in %s", len(gen.pods), time.Since(start).Round(time.Millisecond))
	none := intstr.FromString("100%")
	if _, err := client.PolicyV1().PodDisruptionBudgets(w.ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: gen.guarded},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &none,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": gen.guarded}}}}, metav1.CreateOptions{}); err != nil {
		return nil, err // no disruption controller runs here: its status allows no disruption anyway
	}
	return lc, nil
}

// generated is a cluster before it is created.
type generated struct {
	nodes   []*corev1.Node
	claims  []state.Claim
	pods    []*corev1.Pod
	before  int
	pinned  int
	guarded string // the app whose PodDisruptionBudget allows no disruption
}

// benchApp is a deployment of the generated cluster.
type benchApp struct {
	name   string
	cpu    resource.Quantity
	memory resource.Quantity
	// spread: its pods spread over zones (maxSkew 1), DoNotSchedule when hard, else ScheduleAnyway.
	spread, hard bool
}

// generateCluster packs n nodes of mixed sizes (every 20th oversized and mostly empty, a fifth
// on-demand, the rest spot, 1% annotated do-not-disrupt) with pods of benchApps deployments (a sixth of
// them spread over zones, one guarded by a PodDisruptionBudget), then removes 60% of the pods at
// random, leaving at least one pod on each node so the run has no empty node to take first and must
// search. The seed is fixed: the same n gives the same cluster.
func generateCluster(ns string, n int, catalog map[string]*scheduling.InstanceType) (*generated, error) {
	rng := rand.New(rand.NewPCG(benchSeed1, benchSeed2))
	cpus := []string{"100m", "150m", "200m", "250m", "300m", "350m"}
	mems := []string{"128Mi", "256Mi", "384Mi", "512Mi"}
	apps := make([]benchApp, benchApps)
	for i := range apps {
		apps[i] = benchApp{name: fmt.Sprintf("app-%02d", i), cpu: resource.MustParse(cpus[rng.IntN(len(cpus))]),
			memory: resource.MustParse(mems[rng.IntN(len(mems))]), spread: i%6 == 1, hard: i == 1}
	}
	g := &generated{guarded: apps[0].name}
	total := 0
	for _, s := range benchShapes {
		total += s.weight
	}
	suffix := ns[len(ns)-5:]
	launched := time.Now().Add(-2 * time.Hour)
	initialized := launched.Add(time.Minute)
	zoneCount := map[string]map[string]int{} // app → zone → pods, for the spread apps
	for _, a := range apps {
		zoneCount[a.name] = map[string]int{}
	}
	podsOf := make([][]*corev1.Pod, n)
	for i := range n {
		draw, shape := rng.IntN(total), benchShapes[0]
		for _, s := range benchShapes {
			if draw < s.weight {
				shape = s
				break
			}
			draw -= s.weight
		}
		it := catalog[shape.itype]
		if it == nil {
			return nil, fmt.Errorf("instance type %s is not in the catalog", shape.itype)
		}
		zone := benchZones[i%len(benchZones)]
		ct := instance.CapacityTypeSpot
		if rng.IntN(5) == 0 {
			ct = instance.CapacityTypeOnDemand
		}
		price := -1.0
		for _, o := range it.Offerings {
			if o.Zone == zone && o.CapacityType == ct {
				price = o.Price
			}
		}
		if price < 0 {
			return nil, fmt.Errorf("no %s %s offering in %s", ct, it.Name, zone)
		}
		name := fmt.Sprintf("bench-%04d-%s", i, suffix)
		providerID := fmt.Sprintf("aws:///%s/i-%017x", zone, 0xbe0000000+i)
		labels := map[string]string{"e2e": ns, corev1.LabelHostname: name, scheduling.LabelNodePool: "default",
			scheduling.LabelNodeInitalized: "true", "karpenter.sh/registered": "true", scheduling.LabelInstanceType: it.Name,
			scheduling.LabelZone: zone, scheduling.LabelCapacityType: ct, scheduling.LabelArch: "amd64",
			scheduling.LabelOS: "linux", apis.NodeClassLabelKey: "default"}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{}},
			Spec: corev1.NodeSpec{ProviderID: providerID},
			Status: corev1.NodeStatus{Capacity: it.Capacity.List(), Allocatable: it.Allocatable.List(),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
					LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.NewTime(initialized)}}}}
		if i%100 == 50 {
			node.Annotations[disruption.AnnotationDoNotDisrupt] = "true"
			g.pinned++
		}
		g.nodes = append(g.nodes, node)
		g.claims = append(g.claims, state.Claim{Name: "claim-" + name, NodePool: "default", NodeClass: "default",
			Lifecycle: state.Initialized, InstanceType: it.Name, Zone: zone, CapacityType: ct, PricePerHour: price,
			ProviderID: providerID, NodeName: name, CreatedAt: launched, LaunchedAt: &launched, InitializedAt: &initialized})

		// Pack: draw pods of random apps until several in a row do not fit (an oversized node stops at
		// a third of its CPU).
		alloc := it.Allocatable.List()
		cpuLeft, memLeft, slots := alloc.Cpu().MilliValue(), alloc.Memory().Value(), alloc.Pods().Value()
		if it.Name == benchOversized {
			cpuLeft /= 3
		}
		for misses := 0; misses < 8 && slots > 0; {
			a := apps[rng.IntN(len(apps))]
			if a.cpu.MilliValue() > cpuLeft || a.memory.Value() > memLeft {
				misses++
				continue
			}
			if a.hard {
				counts := zoneCount[a.name]
				lowest := min(counts[benchZones[0]], counts[benchZones[1]])
				if counts[zone]+1-lowest > 1 {
					misses++
					continue
				}
			}
			cpuLeft -= a.cpu.MilliValue()
			memLeft -= a.memory.Value()
			slots--
			zoneCount[a.name][zone]++
			podsOf[i] = append(podsOf[i], benchPod(ns, a, name, len(podsOf[i])))
		}
	}
	// Remove 60% at random, keeping one pod per node.
	for i := range podsOf {
		g.before += len(podsOf[i])
		var kept []*corev1.Pod
		for _, p := range podsOf[i] {
			if rng.Float64() >= benchRemoved {
				kept = append(kept, p)
			}
		}
		if len(kept) == 0 && len(podsOf[i]) > 0 {
			kept = append(kept, podsOf[i][rng.IntN(len(podsOf[i]))])
		}
		g.pods = append(g.pods, kept...)
	}
	return g, nil
}

// benchPod is the j-th pod of app a on node, as a Deployment's pod looks once bound and running.
func benchPod(ns string, a benchApp, node string, j int) *corev1.Pod {
	controller := true
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", a.name, strings.TrimPrefix(node, "bench-"), j), Namespace: ns,
			Labels: map[string]string{"app": a.name, "pod-template-hash": "7d9f8c6b5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: a.name + "-7d9f8c6b5",
				UID: types.UID("00000000-0000-0000-0000-0000000000" + a.name[len(a.name)-2:]), Controller: &controller}}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: a.cpu, corev1.ResourceMemory: a.memory}}}}},
	}
	if a.spread {
		when := corev1.ScheduleAnyway
		if a.hard {
			when = corev1.DoNotSchedule
		}
		p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: when, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": a.name}}}}
	}
	return p
}

// createNode creates a Node as a kubelet leaves it: Ready, with capacity, and without the not-ready
// taint the API server adds at creation (no node-lifecycle controller runs here to remove it).
func createNode(ctx context.Context, c kubernetes.Interface, want *corev1.Node) error {
	n, err := c.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	n.Status = want.Status
	if n, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		_, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		if err != nil {
			if got, gerr := c.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{}); gerr == nil {
				n = got
			}
		}
		return err
	})
}

// createPod creates a pod bound to its node and marks it running and ready, as the kubelet would.
func createPod(ctx context.Context, c kubernetes.Interface, want *corev1.Pod) error {
	p, err := c.CoreV1().Pods(want.Namespace).Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	_, err = c.CoreV1().Pods(want.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// parallel runs fn for 0..n-1 on benchWorkers goroutines and returns the first error.
func parallel(ctx context.Context, n int, fn func(context.Context, int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(benchWorkers)
	for i := range n {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// timings records the calls a run makes through its adapters, in order.
type timings struct {
	start time.Time
	mu    sync.Mutex
	calls []call
}

type call struct {
	name       string
	start, end time.Time
}

func (t *timings) time(name string) func() {
	start := time.Now()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.calls = append(t.calls, call{name: name, start: start, end: time.Now()})
	}
}

// decision is the time from the start of the run to the end of its first Decide: the first decision
// record written after it (recordKept runs right after Decide) when there is one, else the end of the
// first catalog read plus Decide (the input's assembly, in memory, uncounted).
func (t *timings) decision(run, decide time.Duration) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.calls {
		if c.name == "record-decisions" {
			return c.start.Sub(t.start)
		}
	}
	for _, c := range t.calls {
		if c.name == "catalog" {
			return c.end.Sub(t.start) + decide
		}
	}
	return run
}

type phase struct {
	name string
	took time.Duration
}

// phases sums the time of each kind of call before the first decision, named for the metrics:
// snapshot (the API server: advance's and the read's), claims, commands and config (DynamoDB), catalog.
func (t *timings) phases() []phase {
	t.mu.Lock()
	defer t.mu.Unlock()
	sums := map[string]time.Duration{}
	for _, c := range t.calls {
		if c.name == "record-decisions" {
			break
		}
		sums[c.name] += c.end.Sub(c.start)
	}
	var out []phase
	for _, name := range []string{"snapshot", "claims", "commands", "config", "catalog"} {
		out = append(out, phase{name: name, took: sums[name]})
	}
	return out
}

// total is the time spent in every call named name, and how many there were.
func (t *timings) total(name string) (time.Duration, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sum time.Duration
	n := 0
	for _, c := range t.calls {
		if c.name == name {
			sum += c.end.Sub(c.start)
			n++
		}
	}
	return sum, n
}

// String lists the calls in the order they started: name@start+duration.
func (t *timings) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := slices.Clone(t.calls)
	sort.Slice(cs, func(i, j int) bool { return cs[i].start.Before(cs[j].start) })
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s@%.2fs+%.2fs", c.name, c.start.Sub(t.start).Seconds(), c.end.Sub(c.start).Seconds()))
	}
	return strings.Join(parts, " ")
}

// timedStore, timedCluster and timedLauncher time the reads of a run.
type timedStore struct {
	*state.Store
	tm *timings
}

func (s timedStore) ListClaims(ctx context.Context) ([]state.Claim, error) {
	defer s.tm.time("claims")()
	return s.Store.ListClaims(ctx)
}

func (s timedStore) ListDisruptionCommands(ctx context.Context) ([]state.DisruptionCommand, error) {
	defer s.tm.time("commands")()
	return s.Store.ListDisruptionCommands(ctx)
}

func (s timedStore) ListConfig(ctx context.Context, kind string) ([]state.ConfigItem, error) {
	defer s.tm.time("config")()
	return s.Store.ListConfig(ctx, kind)
}

func (s timedStore) ReserveDisruption(ctx context.Context, nodePool, claim string, allowed int) error {
	defer s.tm.time("reserve")()
	return s.Store.ReserveDisruption(ctx, nodePool, claim, allowed)
}

func (s timedStore) RecordDecisions(ctx context.Context, ds []state.Decision) error {
	defer s.tm.time("record-decisions")()
	return s.Store.RecordDecisions(ctx, ds)
}

type timedCluster struct {
	r  consolidation.ClusterReader
	tm *timings
}

func (c timedCluster) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	defer c.tm.time("snapshot")()
	return c.r.Snapshot(ctx)
}

type timedNodes struct {
	consolidation.NodeActions
	tm *timings
}

func (n timedNodes) Taint(ctx context.Context, node string, taint corev1.Taint) error {
	defer n.tm.time("taint")()
	return n.NodeActions.Taint(ctx, node, taint)
}

type timedTerminations struct {
	consolidation.Terminations
	tm *timings
}

func (t timedTerminations) Send(ctx context.Context, req termination.Request) error {
	defer t.tm.time("terminate")()
	return t.Terminations.Send(ctx, req)
}

type timedLauncher struct {
	consolidation.Launcher
	tm *timings
}

func (l timedLauncher) PrepareLaunches(ctx context.Context) (consolidation.Launches, error) {
	defer l.tm.time("catalog")()
	return l.Launcher.PrepareLaunches(ctx)
}

// heapObjectBytes is the heap held by objects, live or not yet swept.
func heapObjectBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// sampleHeap records the largest heap seen every 5 ms until the returned stop is called (garbage not yet
// swept included: what the function's memory must hold).
func sampleHeap(peak *uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	record := func() { *peak = max(*peak, heapObjectBytes()) }
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			record()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished; record() }
}
