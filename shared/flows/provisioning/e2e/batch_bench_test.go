package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// countingEC2 counts CreateFleet calls.
type countingEC2 struct {
	*ec2.Client
	fleets atomic.Int64
}

func (c *countingEC2) CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, optFns ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	c.fleets.Add(1)
	return c.Client.CreateFleet(ctx, in, optFns...)
}

// snapshotOf serves a fixed snapshot: the benchmark measures launching, not reading a cluster.
type snapshotOf struct{ snap *kube.Snapshot }

func (s snapshotOf) Snapshot(context.Context) (*kube.Snapshot, error) { return s.snap, nil }

// nodeSizedPods are n pending pods of 3 CPUs pinned to c5.xlarge on-demand: one node each, all alike.
func nodeSizedPods(n int) *kube.Snapshot {
	snap := &kube.Snapshot{}
	for i := range n {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("p%04d", i), UID: types.UID(fmt.Sprint("uid-", i))},
			Spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelInstanceTypeStable: "c5.xlarge", "karpenter.sh/capacity-type": "on-demand"},
				Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("3")}}}}}}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
		snap.Pending = append(snap.Pending, &p)
	}
	return snap
}

// BenchmarkBatchedLaunch1000 is one provisioning run that launches 1,000 nodes against moto (no node
// agent, no cluster reads: the pending pods are a fixed snapshot). It reports the run's seconds, the
// seconds after the solve (claims written, fleets asked for, instances tagged, claims updated) and the
// CreateFleet calls. Each iteration starts from an empty state table and terminates its instances after.
func BenchmarkBatchedLaunch1000(b *testing.B) {
	const nodes = 1000
	w := newAWSWorld(b)
	prices, err := pricing.NewProvider(region)
	require.NoError(b, err)
	snap := nodeSizedPods(nodes)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		db := state.NewClient(w.cfg)
		table := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i)
		_, err := db.CreateTable(ctx, state.CreateTableInput(table))
		require.NoError(b, err)
		store := state.New(db, table)
		fresh := w
		fresh.store = store
		fresh.applyConfig(b, config)
		ec2c := &countingEC2{Client: w.ec2}
		p := provisioning.New(provisioning.Config{
			Cluster: launchtemplate.Cluster{Name: cluster, Endpoint: "https://demo.example.com", CABundle: testCA,
				ServiceCIDR: "10.100.0.0/16", DNSIP: "10.100.0.10"},
			KubernetesVersion: "1.34",
		}, provisioning.Dependencies{
			Store: store, Cluster: snapshotOf{snap},
			NodeClasses: nodeclass.New(w.ec2, ssm.NewFromConfig(w.cfg), iam.NewFromConfig(w.cfg), cluster, region, time.Now),
			Catalog:     w.ec2, Prices: prices, Templates: launchtemplate.New(w.ec2, cluster, time.Now),
			Launcher: instance.New(ec2c, cluster), Now: time.Now, Rand: rand.New(rand.NewPCG(uint64(i), 3)),
		})
		_, err = p.Catalog(ctx)
		require.NoError(b, err)
		runCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		b.StartTimer()

		start := time.Now()
		rep, err := p.Run(runCtx, fmt.Sprintf("bench-%d", i))
		took := time.Since(start)

		b.StopTimer()
		cancel()
		require.NoError(b, err)
		require.Empty(b, rep.Errors)
		require.Len(b, rep.Claims, nodes)
		b.ReportMetric(took.Seconds(), "s/run")
		b.ReportMetric((took - rep.SolveDuration).Seconds(), "s/launches")
		b.ReportMetric(rep.SolveDuration.Seconds(), "s/solve")
		b.ReportMetric(float64(ec2c.fleets.Load()), "CreateFleet/run")
		terminateAll(b, w.ec2)
		b.StartTimer()
	}
}

// terminateAll terminates the cluster's live instances, so the next iteration starts without them.
func terminateAll(tb testing.TB, c *ec2.Client) {
	all, err := instance.New(c, cluster).List(context.Background())
	require.NoError(tb, err)
	for start := 0; start < len(all); start += 500 {
		var ids []string
		for _, i := range all[start:min(start+500, len(all))] {
			ids = append(ids, i.ID)
		}
		_, err := c.TerminateInstances(context.Background(), &ec2.TerminateInstancesInput{InstanceIds: ids})
		require.NoError(tb, err)
	}
}
