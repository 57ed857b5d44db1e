package disruptionrun

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// BenchmarkRunCommand is one disruption run (Runner.Run with one command: the run's read, advance,
// the decision, the validation and the execution, the validation delay off) over a generated cluster
// of nodes=N "large" nodes spread over zones=2 zones (default 1000 nodes, NW_BENCH_NODES=5000 for the
// largest tier) with 30 pods each:
// three DaemonSet pods and 27 ReplicaSet pods of about 30 replicas per app, over 200 namespaces, a
// quarter of the apps spread over zones (ScheduleAnyway, so simulations see every pod), three apps in
// five under a PodDisruptionBudget that allows one disruption, and every tenth node holding 5 pods
// only (the consolidation candidates). The budget is the default 10%. The fakes are in memory, so the
// figures are the runner's and the engine's work: allocations per run (B/op, allocs/op) and, with
// -cpuprofile and -memprofile, their shares. Metrics: reads (cluster snapshots per run), pods, removed
// (nodes the command removes).
//
// zones=1 puts every node in the first zone while the NodePool launches in two: the spread pods' skew
// cannot be met on any existing node, so each spread pod a simulation moves is tried against every
// node before its constraint is relaxed (the scheduler's first-fit scan restarts at the first node for
// pods with topology rules). That was the slow path, 9.1 s of CPU per run at 5,000 nodes against 2.8 s
// for two zones, until the scheduler learned to skip a scan no node can pass (noSlotAllows).
//
//	go test ./shared/flows/disruptionrun -run '^$' -bench BenchmarkRunCommand -benchtime=3x -benchmem
func BenchmarkRunCommand(b *testing.B) {
	n := 1000
	if v := os.Getenv("NW_BENCH_NODES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10 {
			b.Fatalf("NW_BENCH_NODES=%q: want a number of nodes ≥ 10", v)
		}
	}
	for _, zones := range []int{2, 1} {
		b.Run(fmt.Sprintf("nodes=%d/zones=%d", n, zones), func(b *testing.B) { benchmarkRunCommand(b, n, zones) })
	}
}

func benchmarkRunCommand(b *testing.B, n, zones int) {
	b.ReportAllocs()
	var rep Report
	var f *fixture
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f = benchCluster(b, n, zones)
		f.runner.cfg.MaxCommands = 1
		b.StartTimer()
		var err error
		rep, err = f.runner.Run(context.Background(), "bench")
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(rep.Commands) == 0 {
		b.Fatalf("the run decided nothing: skipped %q, rejected %v", rep.Skipped, rep.Rejected)
	}
	b.ReportMetric(float64(f.cluster.reads), "reads")
	b.ReportMetric(float64(len(f.cluster.pods)), "pods")
	b.ReportMetric(float64(len(rep.Commands[0].Nodes)), "removed")
}

// benchCluster generates the cluster BenchmarkRunCommand describes.
func benchCluster(b *testing.B, nodes, zones int) *fixture {
	f := newFixture(b, "10%")
	const perNode, daemons = 30, 3
	apps := max(1, nodes*(perNode-daemons)/30)
	f.cluster.pods = make([]corev1.Pod, 0, nodes*perNode)
	app := 0
	for i := range nodes {
		name := fmt.Sprintf("node-%05d", i)
		f.node(name, "large")
		zone := schedulingtest.Zones[i%zones] // the catalog's offerings are in two zones
		f.cluster.nodes[i].Labels[corev1.LabelTopologyZone] = zone
		c := f.store.claims["claim-"+name]
		c.Zone = zone
		f.store.claims[c.Name] = c
		for d := range daemons {
			p := benchPod(fmt.Sprintf("ds%d-%s", d, name), "kube-system", fmt.Sprintf("ds%d", d), name, "50m", "64Mi")
			p.OwnerReferences[0].Kind = "DaemonSet"
			f.cluster.pods = append(f.cluster.pods, *p)
		}
		pods := perNode - daemons
		if i%10 == 9 {
			pods = 5 - daemons
		}
		for j := range pods {
			a := app % apps
			app++
			p := benchPod(fmt.Sprintf("app%d-%s-%d", a, name, j), fmt.Sprintf("ns-%d", a%200), fmt.Sprintf("app%d", a), name,
				[]string{"100m", "150m", "200m", "250m"}[a%4], []string{"128Mi", "256Mi", "384Mi"}[a%3])
			if a%4 == 0 {
				p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
					WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Labels["app"]}}}}
			}
			f.cluster.pods = append(f.cluster.pods, *p)
		}
	}
	one := intstr.FromInt32(1)
	for a := range apps {
		if a%5 >= 3 {
			continue
		}
		f.cluster.pdbs = append(f.cluster.pdbs, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app%d", a), Namespace: fmt.Sprintf("ns-%d", a%200), ResourceVersion: "1"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": fmt.Sprintf("app%d", a)}}},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
		})
	}
	return f
}

// benchPod is a running, ready pod of app bound to node, shaped as a trimmed snapshot keeps it.
func benchPod(name, namespace, app, node, cpu, memory string) *corev1.Pod {
	p := schedulingtest.Pod(schedulingtest.PodOptions{Name: name, Namespace: namespace, Owner: app, CPU: cpu, Memory: memory,
		Labels: map[string]string{"app": app, "pod-template-hash": "5d8f7c9b4" + app, "app.kubernetes.io/part-of": namespace}})
	p.Spec.NodeName = node
	p.UID = types.UID("uid-" + namespace + "-" + name)
	p.ResourceVersion = "1"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: p.CreationTimestamp}}
	return p
}
