package provisioning

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// fakeCluster returns a fixed snapshot.
type fakeCluster struct {
	snap *kube.Snapshot
	err  error
}

func (f fakeCluster) Snapshot(context.Context) (*kube.Snapshot, error) { return f.snap, f.err }

// flatPrices prices every type at its on-demand price, spot at spotFactor of it.
type flatPrices map[string]float64

func (p flatPrices) OnDemand(it string) (float64, bool) { v, ok := p[it]; return v, ok }
func (p flatPrices) Spot(it, _ string) (float64, bool)  { v, ok := p[it]; return v * spotFactor, ok }

// pod is an unschedulable pod requesting one CPU; selector, when set, is its nodeSelector.
func pod(name string, selector map[string]string) corev1.Pod {
	p := unschedulable(name)
	p.Spec.NodeSelector = selector
	p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
	return p
}

// pendingSnapshot is a cluster with no nodes and the pods pending.
func pendingSnapshot(pods ...corev1.Pod) *kube.Snapshot {
	snap := &kube.Snapshot{}
	for i := range pods {
		snap.Pending = append(snap.Pending, &pods[i])
	}
	return snap
}

type testWorld struct {
	store *state.Store
	ec2   *fakeEC2Capacity
	p     *Provisioner
}

// newTestProvisioner wires a provisioner over moto's DynamoDB (holding poolAndClass) and fakes for
// everything else: one class resolving to subnets in us-east-1a and an amd64 AMI, a one-type catalog.
func newTestProvisioner(t *testing.T, cluster ClusterReader) testWorld {
	t.Helper()
	s := newStateStore(t)
	_, err := s.ApplyConfig(context.Background(), storedConfig(t, poolAndClass), false)
	require.NoError(t, err)
	ec2 := &fakeEC2Capacity{capacity: map[instance.Offering]bool{{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}: true}}
	resolved := nodeclass.Resolution{Ready: true, Subnets: []nodeclass.Subnet{{ID: "subnet-a", Zone: "us-east-1a"}},
		Status: testClass().resolved.Status}
	p := New(Config{}, Dependencies{Store: s, Cluster: cluster,
		NodeClasses: &fakeResolver{res: map[string]nodeclass.Resolution{"default": resolved}},
		Prices:      flatPrices{"m5.xlarge": 0.192}, Templates: &fakeTemplates{}, Launcher: ec2,
		Now: time.Now, Rand: rand.New(rand.NewPCG(7, 7))})
	p.catalog = &instancetypes.Catalog{Types: []instancetypes.Type{{Info: scheduling.InstanceInfo{Name: "m5.xlarge", VCPUs: 4,
		MemoryMiB: 16384, Architecture: "amd64", MaxENIs: 4, IPv4PerENI: 15, Hypervisor: "nitro"},
		Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true}}}
	return testWorld{store: s, ec2: ec2, p: p}
}

// leaseFree reports whether another holder can take the provisioner lease now.
func leaseFree(t *testing.T, s *state.Store) bool {
	t.Helper()
	l, err := s.AcquireLease(context.Background(), LeaseName, "checker", time.Minute)
	if errors.Is(err, state.ErrLeaseHeld) {
		return false
	}
	require.NoError(t, err)
	require.NoError(t, s.ReleaseLease(context.Background(), l))
	return true
}

func TestRunLaunchesAndExplains(t *testing.T) {
	snap := pendingSnapshot(pod("a", nil), pod("b", nil), pod("arm", map[string]string{corev1.LabelArchStable: "arm64"}))
	w := newTestProvisioner(t, fakeCluster{snap: snap})

	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.True(t, rep.Lease)
	assert.Equal(t, 3, rep.PendingPods)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, 2, rep.Claims[0].Pods)
	assert.Equal(t, "spot", rep.Claims[0].CapacityType)
	require.Len(t, rep.Unschedulable, 1)
	assert.Equal(t, "ns/arm", rep.Unschedulable[0].Pod)

	d, err := w.store.Decisions(context.Background(), "pod/ns/arm", 10)
	require.NoError(t, err)
	require.Len(t, d, 1)
	assert.Equal(t, "CannotProvision", d[0].Kind)
	assert.Equal(t, rep.Unschedulable[0].Reason, d[0].Message)
	assert.True(t, leaseFree(t, w.store), "the lease is released")

	again, err := w.p.Run(context.Background(), "run-2")
	require.NoError(t, err)
	assert.Equal(t, 1, again.InFlight)
	assert.Empty(t, again.Claims, "the launched claim absorbs the pods")
	assert.Len(t, w.ec2.requests, 1)
	require.Len(t, again.Unschedulable, 1, "the run still reports the pod")
	d, err = w.store.Decisions(context.Background(), "pod/ns/arm", 10)
	require.NoError(t, err)
	assert.Len(t, d, 2, "the verdict changed: the in-flight claim rejects the pod too")

	third, err := w.p.Run(context.Background(), "run-3")
	require.NoError(t, err)
	require.Len(t, third.Unschedulable, 1)
	d, err = w.store.Decisions(context.Background(), "pod/ns/arm", 10)
	require.NoError(t, err)
	assert.Len(t, d, 2, "the same verdict is not written again within FailedSchedulingInterval")
}

func TestRunStopsLaunchingNearTheDeadline(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil), pod("b", nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	require.Len(t, rep.Skipped, 1)
	assert.Contains(t, rep.Skipped[0], "nodepool default: 2 pods")
	assert.Empty(t, w.ec2.requests)
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Empty(t, claims, "nothing is written for a launch that is not started")
	assert.True(t, leaseFree(t, w.store))
}

func TestRunDecidesNothingOnIncompleteData(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{err: errors.New("listing pods: timeout")})
	_, err := w.p.Run(context.Background(), "run-1")
	require.ErrorContains(t, err, "listing pods: timeout")
	assert.Empty(t, w.ec2.requests)
	assert.True(t, leaseFree(t, w.store), "the lease is released after a failed run")
}

func TestRunWhileTheLeaseIsHeld(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil), pod("b", nil))})
	_, err := w.store.AcquireLease(context.Background(), LeaseName, "other-run", time.Minute)
	require.NoError(t, err)
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, Report{}, rep)
	assert.Empty(t, w.ec2.requests)
}

func TestRunReportsUnusableNodePools(t *testing.T) {
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	w.p.deps.NodeClasses = &fakeResolver{res: map[string]nodeclass.Resolution{"default": {}}}
	rep, err := w.p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	assert.Len(t, rep.Unschedulable, 1)
	assert.Contains(t, rep.Errors, "NodePool default cannot launch: EC2NodeClass default is not ready: no Ready condition")
}

func TestRunNeedsARunID(t *testing.T) {
	_, err := New(Config{}, Dependencies{}).Run(context.Background(), "")
	assert.ErrorContains(t, err, "run id is required")
}
