package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// claimsThenDisruption is the provisioner's real store, whose first claim list is answered before a
// disruption executes: execute runs once that list is read, and executed is closed after it.
type claimsThenDisruption struct {
	provisioning.Store
	once     sync.Once
	execute  func()
	executed chan struct{}
}

func (s *claimsThenDisruption) ListClaims(ctx context.Context) ([]state.Claim, error) {
	claims, err := s.Store.ListClaims(ctx)
	s.once.Do(func() {
		s.execute()
		close(s.executed)
	})
	return claims, err
}

// clusterAfterDisruption is the provisioner's real cluster reader, read once the disruption executed.
type clusterAfterDisruption struct {
	provisioning.ClusterReader
	executed <-chan struct{}
}

func (c clusterAfterDisruption) Snapshot(ctx context.Context) (*kube.Snapshot, error) {
	select {
	case <-c.executed:
		return c.ClusterReader.Snapshot(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// The disruption function replaces one of Nodewright's Nodes while a provisioning run reads: as
// consolidation's execute does, it records the replacement claim through the provisioning launch path
// (Launches.Record) and then taints the Node, after the run's claim list was answered and before its
// snapshot. The replacement in flight takes the Node's pods: the run launches nothing. The old code read
// claims and cluster at once, saw the taint without the replacement, and launched a second one.
func TestProvisionerSeesTheReplacementOfADisruptionBetweenItsReads(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node := ownNode(t, w, cp, "replaced-"+ns, "default-old01", "i-0replaced")
	runPods(t, cp, ns, node, 3)
	pods, err := cp.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var bound []*corev1.Pod
	for i := range pods.Items {
		bound = append(bound, &pods.Items[i])
	}

	// The disruption function's side: its own provisioner (as functions/disruption has), its plan for the
	// Node's pods and the launches it records them through.
	disruption := newProvisioner(t, w, cp, ns)
	plan, err := disruption.Plan(ctx, bound)
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 1)
	launches, err := disruption.PrepareLaunches(ctx)
	require.NoError(t, err)
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)

	executed := make(chan struct{})
	p := newProvisionerDeps(t, w, cp, ns, func(d *provisioning.Dependencies) {
		d.Store = &claimsThenDisruption{Store: d.Store, executed: executed, execute: func() {
			_, err := launches.Record(ctx, plan.NewClaims[0], "default-new01", []string{"default-old01"})
			assert.NoError(t, err, "recording the replacement")
			assert.NoError(t, kube.NewActions(client).Taint(ctx, node, apis.DisruptedNoScheduleTaint), "tainting the replaced Node")
		}}
		d.Cluster = clusterAfterDisruption{ClusterReader: d.Cluster, executed: executed}
	})

	rep, err := p.Run(ctx, "run-during-disruption")
	require.NoError(t, err)
	assert.Equal(t, 3, rep.PendingPods, "the tainted Node's pods need a new place")
	assert.Equal(t, 1, rep.InFlight, "the disruption's replacement")
	assert.Empty(t, rep.Claims, "no second replacement")
	assert.Empty(t, w.claimedInstances(t), "nothing launched (the disruption launches its replacement itself)")
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Len(t, claims, 2, "the replaced Node's claim and its replacement")
}
