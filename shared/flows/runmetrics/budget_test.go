package runmetrics

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/metrics"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/flows/lifecycle"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/flows/termination"
)

// The idle budget: CloudWatch bills each series written in a month; an idle cluster must cost less
// than this a month in metrics.
const (
	idleBudgetDollars = 5.0
	// ingestionPerGB is CloudWatch Logs' price of ingesting a GB (the EMF lines are log events).
	ingestionPerGB = 0.50
	// runsPerMonth: the provisioner's backstop, the lifecycle and the disruption schedules each run once
	// a minute.
	runsPerMonth = 60 * 24 * 30
)

// idleRuns are each function's output for a run with nothing to do in an idle cluster: one NodePool
// (limited to 1000 cpu, as the README's sample) and no Nodewright Node; the cluster's own system pods run
// on a node of a managed node group. The reports are those the use cases build for such a run: the
// capacity and usage are computed by their own functions from that cluster. Interruption, termination
// and the webhook are not invoked at all in an idle cluster (no message, no Event); they are written
// with empty input anyway, which must write nothing.
func idleRuns(t *testing.T, pools map[string]scheduling.NodePool, nodes []corev1.Node, claims []state.Claim) map[string][]byte {
	t.Helper()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var pods []*corev1.Pod
	for _, n := range nodes {
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns-" + n.Name},
			Spec:   corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{Name: "c"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	snap := &kube.Snapshot{Nodes: nodes, Bound: pods}
	c := provisioning.CapacityOf(snap, provisioning.NewClaimIndex(claims), now.Add(-time.Minute), now)
	nodePtrs := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		nodePtrs[i] = &nodes[i]
	}
	allowed := map[string]map[disruption.Reason]int{}
	eligible := map[string]int{}
	for name := range pools {
		allowed[name] = map[disruption.Reason]int{disruption.ReasonEmpty: 1, disruption.ReasonDrifted: 1, disruption.ReasonUnderutilized: 1}
	}
	for _, cl := range claims {
		eligible[cl.NodePool]++
	}
	prices := staticPrices{"m5.large/us-east-1a/on-demand": 0.096}
	out := map[string][]byte{}
	write := func(fn string, w func(io.Writer) error) {
		var buf bytes.Buffer
		require.NoError(t, w(&buf), fn)
		out[fn] = buf.Bytes()
	}
	write("provisioner", func(w io.Writer) error {
		return Provisioner(w, "prod", provisioning.Outcome{Report: provisioning.Report{Lease: true}, Capacity: &c}, now)
	})
	write("lifecycle", func(w io.Writer) error {
		return Lifecycle(w, "prod", lifecycle.RunReport{Lease: true, Usage: lifecycle.Usage(nodePtrs, claims, pools),
			Offerings: lifecycle.OfferingsInUse(claims, prices)}, now)
	})
	write("disruption", func(w io.Writer) error {
		return Disruption(w, "prod", disruptionrun.Report{Lease: true, Evaluation: 3 * time.Millisecond,
			EligibleNodes: eligible, Allowed: allowed, BudgetBlocked: map[string]int{}}, now)
	})
	write("interruption", func(w io.Writer) error { return Interruption(w, "prod", interruption.BatchStats{}, now) })
	write("termination", func(w io.Writer) error { return Termination(w, "prod", termination.BatchStats{}, now) })
	return out
}

type staticPrices map[string]float64

func (p staticPrices) Price(instanceType, zone, capacityType string) (float64, bool) {
	v, ok := p[instanceType+"/"+zone+"/"+capacityType]
	return v, ok
}

// series counts the distinct series of the runs' output and its bytes.
func series(t *testing.T, runs map[string][]byte) (map[string]bool, int) {
	t.Helper()
	all, size := map[string]bool{}, 0
	for fn, out := range runs {
		size += len(out)
		recs, err := metrics.Records(out)
		require.NoError(t, err, fn)
		for _, r := range recs {
			require.NoError(t, metrics.Check(r), fn)
			for _, s := range metrics.Series(r) {
				all[s] = true
			}
		}
	}
	return all, size
}

func defaultPool() map[string]scheduling.NodePool {
	return map[string]scheduling.NodePool{"default": {Name: "default", Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}}}
}

func node(name, providerID string, labels map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m"), corev1.ResourceMemory: resource.MustParse("7Gi")}}}
}

// IdleSeries is how many series an idle cluster writes a month; the README states it and its cost.
const IdleSeries = 11

func TestIdleClusterStaysWithinTheBudget(t *testing.T) {
	managed := node("system-1", "aws:///us-east-1a/i-0system", map[string]string{"eks.amazonaws.com/nodegroup": "system"})
	runs := idleRuns(t, defaultPool(), []corev1.Node{managed}, nil)
	got, size := series(t, runs)
	for _, fn := range []string{"interruption", "termination"} {
		assert.Empty(t, runs[fn], "%s writes nothing for nothing", fn)
	}

	metricCost := float64(len(got)) * metrics.MonthlyCostPerSeries
	ingestion := float64(size) * runsPerMonth / (1 << 30) * ingestionPerGB
	t.Logf("idle: %d series, $%.2f a month; %d bytes of EMF a minute, $%.3f a month to ingest", len(got), metricCost, size, ingestion)
	assert.Equal(t, IdleSeries, len(got), "the README states this count and its cost: %v", got)
	assert.Less(t, metricCost+ingestion, idleBudgetDollars)
}

// TestAWorkingNodePoolAddsABoundedNumberOfSeries: a NodePool with Nodewright Nodes and nothing to do adds
// its capacity (4 node metrics × cpu, memory), pods_state, eligible nodes, and one price per offering in use,
// plus the cluster's two utilization series; never one series per Node.
func TestAWorkingNodePoolAddsABoundedNumberOfSeries(t *testing.T) {
	labels := map[string]string{scheduling.LabelNodePool: "default", corev1.LabelTopologyZone: "us-east-1a"}
	var nodes []corev1.Node
	var claims []state.Claim
	for _, id := range []string{"i-01", "i-02", "i-03", "i-04", "i-05", "i-06", "i-07", "i-08"} {
		n := node("ip-"+id, "aws:///us-east-1a/"+id, labels)
		nodes = append(nodes, n)
		claims = append(claims, state.Claim{Name: "default-" + id, NodePool: "default", Lifecycle: state.Initialized, InstanceType: "m5.large",
			Zone: "us-east-1a", CapacityType: "on-demand", ProviderID: n.Spec.ProviderID, NodeName: n.Name})
	}
	idle, _ := series(t, idleRuns(t, defaultPool(), nodes[:0], nil))
	working, _ := series(t, idleRuns(t, defaultPool(), nodes, claims))
	one, _ := series(t, idleRuns(t, defaultPool(), nodes[:1], claims[:1]))
	added := len(working) - len(idle)
	t.Logf("a working NodePool adds %d series ($%.2f a month)", added, float64(added)*metrics.MonthlyCostPerSeries)
	assert.Equal(t, 4*2+1+1+1+2, added, "node metrics, pods_state, eligible nodes, one offering price, utilization")
	assert.Equal(t, len(one), len(working), "eight Nodes write no more series than one")
}
