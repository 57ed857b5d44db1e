package e2e

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

const (
	// runBenchPods pending pods: schedulingtest.MixedWorkload at scale 400 (web, api, worker, cache,
	// batch, ml and sidecar-heavy deployments, 100 pods per unit of scale).
	runBenchScale = 400
	runBenchPods  = 100 * runBenchScale
	// runBenchNodes existing Nodes (m5.4xlarge-sized, from the default NodePool), each running
	// runBenchBoundPerNode pods already.
	runBenchNodes        = 2000
	runBenchBoundPerNode = 2
	runBenchWorkers      = 48
)

// recordingLauncher stands in for EC2's CreateFleet: it records each launch request and answers with an
// instance on the request's first (cheapest) override, so the run goes through every launch decision
// and state write without the EC2 call itself.
type recordingLauncher struct {
	mu       sync.Mutex
	requests []instance.Request
}

func (l *recordingLauncher) Launch(_ context.Context, req instance.Request) (instance.Instance, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests = append(l.requests, req)
	if len(req.Overrides) == 0 {
		return instance.Instance{}, fmt.Errorf("claim %s: launch request without overrides", req.Claim)
	}
	o := req.Overrides[0]
	return instance.Instance{ID: fmt.Sprintf("i-%017x", len(l.requests)), InstanceType: o.InstanceType, Zone: o.Zone,
		CapacityType: req.CapacityType, SubnetID: o.SubnetID, State: "pending", LaunchTime: time.Now()}, nil
}

// BenchmarkProvisionerRun40000Pods2000Nodes times one provisioner run with the real adapters (the API
// server's snapshot, the state table, node classes, launch templates and the catalog on moto) over 40,000
// pending pods and 2,000 existing Nodes: snapshot, solve, and every claim written and launch decided,
// with recordingLauncher in place of CreateFleet. Seeding the cluster is set-up, outside the timing; each
// iteration starts from a fresh state table (a new moto world) so it decides on the same pods. Reported:
// medians over the iterations of run-s (wall time of the run), peak-heap-MB (largest heap, garbage
// included, sampled every 2 ms), peak-inuse-MB (largest memory the Go runtime held from the OS: mapped
// minus released) and snapshot-s (one snapshot alone, taken after the run, for the run's breakdown). The pending pods name a scheduler that does not run, so a kube-scheduler started by
// another test of the binary leaves them alone. Benchmarks never run under `go test` without -bench, so
// `make test` does not run it:
//
//	go test -run '^$' -bench ProvisionerRun40000 -benchtime 3x -timeout 30m ./shared/flows/provisioning/e2e/
func BenchmarkProvisionerRun40000Pods2000Nodes(b *testing.B) {
	cp := kubetest.Shared(b, kubetest.Options{})
	runBenchSeed.once.Do(func() {
		start := time.Now()
		runBenchSeed.err = seedRunBench(cp, runBenchNamespace)
		runBenchSeed.took = time.Since(start)
	})
	if runBenchSeed.err != nil {
		b.Fatalf("seeding the cluster: %v", runBenchSeed.err)
	}
	b.Logf("seeded %d nodes, %d bound and %d pending pods in %s", runBenchNodes, runBenchNodes*runBenchBoundPerNode,
		runBenchPods, runBenchSeed.took.Round(time.Second))

	var runs, heaps, inUse, snapshots []float64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		w := newAWSWorld(b)
		launcher := &recordingLauncher{}
		p := newProvisionerWith(b, w, cp, runBenchNamespace, launcher)
		// The first run discovers the catalog; a warm function has it already (Provisioner.Catalog).
		if _, err := p.Catalog(context.Background()); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var peakHeap, peakInUse uint64
		stop := sampleMemory(&peakHeap, &peakInUse)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		b.StartTimer()
		began := time.Now()
		rep, err := p.Run(ctx, fmt.Sprintf("bench-%d", i))
		took := time.Since(began)
		b.StopTimer()
		cancel()
		stop()
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, took.Seconds())
		heaps = append(heaps, float64(peakHeap)/(1<<20))
		inUse = append(inUse, float64(peakInUse)/(1<<20))
		placed := 0
		for _, c := range rep.Claims {
			placed += c.Pods
		}
		if rep.PendingPods != runBenchPods || len(rep.Errors) > 0 || len(rep.Skipped) > 0 || len(rep.Unschedulable) > 0 {
			b.Fatalf("run: %d pending, %d errors (%v), %d skipped, %d unschedulable", rep.PendingPods, len(rep.Errors),
				first(rep.Errors), len(rep.Skipped), len(rep.Unschedulable))
		}
		if len(launcher.requests) != len(rep.Claims) || len(rep.Claims) == 0 {
			b.Fatalf("%d launch requests for %d claims", len(launcher.requests), len(rep.Claims))
		}
		b.ReportMetric(float64(len(rep.Claims)), "claims")
		b.ReportMetric(float64(placed), "pods-on-claims")
		b.ReportMetric(rep.SolveDuration.Seconds(), "solve-s")
		snapshots = append(snapshots, timeSnapshot(b, cp))
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(median(runs), "run-s-median")
	b.ReportMetric(median(heaps), "peak-heap-MB-median")
	b.ReportMetric(median(inUse), "peak-inuse-MB-median")
	b.ReportMetric(median(snapshots), "snapshot-s-median")
	b.Logf("runs (s): %.3f; peak heap (MB): %.0f; peak in use (MB): %.0f; snapshot alone (s): %.3f", runs, heaps, inUse, snapshots)
}

// timeSnapshot times one snapshot of the benchmark's cluster as the run reads it, to tell how much of a
// run is the snapshot (the solve's share is in the run's report).
func timeSnapshot(tb testing.TB, cp *kubetest.ControlPlane) float64 {
	client, err := kube.NewClientset(cp.Config)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	snap, err := kube.NewSnapshotter(client, kube.SnapshotOptions{Namespace: runBenchNamespace}).Snapshot(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if len(snap.Pending) != runBenchPods {
		tb.Fatalf("snapshot has %d pending pods, want %d", len(snap.Pending), runBenchPods)
	}
	return time.Since(start).Seconds()
}

// runBenchSeed seeds the cluster once per test binary: the benchmark function runs more than once.
var runBenchSeed struct {
	once sync.Once
	err  error
	took time.Duration
}

// runBenchNamespace holds the benchmark's pods; it is not deleted (the control plane ends with the binary).
const runBenchNamespace = "bench-provisioner-run"

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// newProvisionerWith is newProvisioner with the given launcher in place of EC2's and, as
// functions/provisioner has, an Event recorder (rate-limited: a burst of Nominated Events, then 10/s).
func newProvisionerWith(tb testing.TB, w awsWorld, cp *kubetest.ControlPlane, ns string, l provisioning.InstanceLauncher) *provisioning.Provisioner {
	client, err := kube.NewClientset(cp.Config)
	if err != nil {
		tb.Fatal(err)
	}
	return newProvisionerDeps(tb, w, cp, ns, func(d *provisioning.Dependencies) {
		d.Launcher = l
		d.Events = kube.NewRecorder(client, kube.RecorderOptions{Instance: "provisioner"})
	})
}

// sampleMemory records, every 2 ms until stop is called, the largest heap (objects live or not yet
// swept) and the largest memory the runtime held from the OS (mapped minus released).
func sampleMemory(heap, inUse *uint64) (stop func()) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}}
	record := func() {
		metrics.Read(samples)
		*heap = max(*heap, samples[0].Value.Uint64())
		*inUse = max(*inUse, samples[1].Value.Uint64()-samples[2].Value.Uint64())
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
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
	return func() {
		close(done)
		<-finished
		record()
	}
}

// seedRunBench creates the Nodes, the pods bound to them and the pending pods (marked Unschedulable as
// kube-scheduler would) in namespace ns, with a pool of workers and no client-side rate limit.
func seedRunBench(cp *kubetest.ControlPlane, ns string) error {
	cfg := kube.Tuned(cp.Config)
	cfg.QPS, cfg.Burst = -1, 0
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		return err
	}
	nodes := make([]string, runBenchNodes)
	if err := inParallel(ctx, runBenchNodes, func(ctx context.Context, i int) error {
		n := runBenchNode(ns, i)
		nodes[i] = n.Name
		created, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// The API server taints a new Node not-ready; its kubelet's Node would have lost the taint.
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if created == nil {
				if created, err = client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{}); err != nil {
					return err
				}
			}
			created.Spec.Taints = nil
			_, err := client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{})
			created = nil
			return err
		})
	}); err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	bound := runBenchNodes * runBenchBoundPerNode
	if err := inParallel(ctx, bound, func(ctx context.Context, i int) error {
		pod := schedulingtest.Pod(schedulingtest.PodOptions{Name: fmt.Sprintf("running-%d", i), Namespace: ns,
			Owner: "running", CPU: "2", Memory: "4Gi", NodeName: nodes[i%runBenchNodes]})
		pod.UID, pod.Status = "", corev1.PodStatus{}
		withImage(pod)
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating bound pods: %w", err)
	}
	pending := schedulingtest.DeploymentPods(schedulingtest.MixedWorkload(runBenchScale))
	if err := inParallel(ctx, len(pending), func(ctx context.Context, i int) error {
		pod := pending[i]
		pod.Namespace, pod.UID, pod.CreationTimestamp = ns, "", metav1.Time{}
		withImage(pod)
		pod.Spec.SchedulerName = "no-such-scheduler"
		status := pod.Status
		pod.Status = corev1.PodStatus{}
		created, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status = status
		_, err = client.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("creating pending pods: %w", err)
	}
	return nil
}

// withImage gives the pod's containers the image the API server requires.
func withImage(pod *corev1.Pod) {
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Image = "registry.k8s.io/pause:3.10"
	}
}

// inParallel runs fn for 0..n-1 on runBenchWorkers goroutines and returns the first error.
func inParallel(ctx context.Context, n int, fn func(context.Context, int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runBenchWorkers)
	for i := range n {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// runBenchNode is an initialized m5.4xlarge Node of the default NodePool in one of the world's zones.
func runBenchNode(ns string, i int) *corev1.Node {
	name := fmt.Sprintf("%s-node-%04d", ns, i)
	zone := []string{"us-east-1a", "us-east-1b"}[i%2]
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("15890m"), corev1.ResourceMemory: resource.MustParse("62Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("90Gi")}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			corev1.LabelInstanceTypeStable: "m5.4xlarge", corev1.LabelTopologyZone: zone, corev1.LabelTopologyRegion: region,
			"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": "on-demand", "karpenter.sh/initialized": "true",
			"karpenter.sh/registered": "true", "karpenter.k8s.aws/instance-family": "m5", "karpenter.k8s.aws/instance-category": "m",
		}},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-%017x", zone, 1<<40+i)},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable, Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}},
	}
}
