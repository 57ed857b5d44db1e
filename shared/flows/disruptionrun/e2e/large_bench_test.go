package e2e

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
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

// BenchmarkDisruptionRunLargeCluster times one disruption run (disruptionrun.Runner.Run) over a
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
// catalog-s sum each kind of read before the decision (the run's one cluster read, which advance and
// the decision share; advance and the decision's read both read claims and commands); exec-*-s sum the execution's ledger reservations, taints and
// termination requests. The cluster is seeded once per test binary (not timed); after each run its
// taints are lifted and moto is set up afresh (not timed), so every run sees the same cluster; the first
// run finds the provisioner's catalog warm (seeding read it), later ones read it cold. Only the pods
// that survive the removal are created: the API server holds what it would after the deletions.
//
//	CI=true go test ./shared/flows/disruptionrun/e2e -run '^$' -bench BenchmarkDisruptionRunLargeCluster -benchtime=1x -count=3 -timeout 30m
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

	var rep disruptionrun.Report
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
func (lc *largeCluster) runner(tm *timings) *disruptionrun.Runner {
	w := lc.w
	lc.used = true
	snap := kube.NewSnapshotter(w.client, kube.SnapshotOptions{Namespace: lc.ns, NodeSelector: "e2e=" + lc.ns})
	return disruptionrun.New(disruptionrun.Config{ValidationDelay: -1, MaxCommands: 1},
		disruptionrun.Deps{
			Store:        timedStore{Store: w.store, tm: tm},
			Cluster:      timedCluster{r: snap, tm: tm},
			Launcher:     timedLauncher{Launcher: disruptionrun.ProvisionerLauncher{P: w.prov}, tm: tm},
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
