package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// memoryPod is a pending pod asking for 6,656 MiB: an m5.large as estimated (8,192 MiB less 7.5 %, then
// kube-reserved and eviction: 6,903 MiB allocatable) holds it, one whose Node reported 7,000 MiB (6,326
// MiB allocatable) does not.
func memoryPod(name string) corev1.Pod {
	p := unschedulable(name)
	p.Spec.Containers = []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("6656Mi")}}}}
	return p
}

// memoryWorld is newTestProvisioner with m5.large and m5.xlarge in the catalog, both with capacity.
func memoryWorld(t *testing.T, pods ...corev1.Pod) testWorld {
	t.Helper()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pods...)})
	info := func(name string, vcpus, mib int64) instancetypes.Type {
		return instancetypes.Type{Info: scheduling.InstanceInfo{Name: name, VCPUs: vcpus, MemoryMiB: mib, Architecture: "amd64",
			MaxENIs: 3, IPv4PerENI: 10, Hypervisor: "nitro"}, Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true}
	}
	w.p.catalog = &instancetypes.Catalog{Types: []instancetypes.Type{info("m5.large", 2, 8192), info("m5.xlarge", 4, 16384)}}
	w.p.deps.Prices = flatPrices{"m5.large": 0.096, "m5.xlarge": 0.192}
	for _, it := range []string{"m5.large", "m5.xlarge"} {
		for _, ct := range []string{"spot", "on-demand"} {
			w.ec2.capacity[instance.Offering{InstanceType: it, Zone: "us-east-1a", CapacityType: ct}] = true
		}
	}
	return w
}

func observe(t *testing.T, s *state.Store, instanceType, image string, mib int64) {
	t.Helper()
	written, err := s.RecordMemory(context.Background(), state.MemoryObservation{InstanceType: instanceType, ImageID: image,
		MemoryBytes: mib << 20, Node: "ip-10-0-0-9"})
	require.NoError(t, err)
	require.True(t, written)
}

// The defect Karpenter's discovered capacity fixes: the estimate says the pod fits an m5.large, a
// registered m5.large launched from the same AMI said it has less memory; the plan must take a bigger type.
func TestRunPlansWithObservedMemory(t *testing.T) {
	ctx := context.Background()
	launched := func(t *testing.T, w testWorld) (state.Claim, state.Decision) {
		t.Helper()
		rep, err := w.p.Run(ctx, "run-1")
		require.NoError(t, err)
		require.Empty(t, rep.Errors)
		require.Empty(t, rep.Unschedulable)
		require.Len(t, rep.Claims, 1)
		c, err := w.store.GetClaim(ctx, rep.Claims[0].Name)
		require.NoError(t, err)
		d, err := w.store.Decisions(ctx, "nodeclaim/"+c.Name, 10)
		require.NoError(t, err)
		for _, dd := range d {
			if dd.Kind == "Launch" {
				return c, dd
			}
		}
		require.FailNow(t, "no Launch decision")
		return c, state.Decision{}
	}

	t.Run("nothing observed: the estimate places the pod on an m5.large", func(t *testing.T) {
		w := memoryWorld(t, memoryPod("big"))
		c, d := launched(t, w)
		assert.Equal(t, "m5.large", c.InstanceType)
		assert.Contains(t, d.Details["memoryCapacity"], "estimated: 7577Mi")
	})
	t.Run("a registered m5.large on the class's AMI reported less: the pod gets an m5.xlarge", func(t *testing.T) {
		w := memoryWorld(t, memoryPod("big"))
		observe(t, w.store, "m5.large", "ami-amd64", 7000)
		observe(t, w.store, "m5.xlarge", "ami-amd64", 15000)
		c, d := launched(t, w)
		assert.Equal(t, "m5.xlarge", c.InstanceType)
		assert.NotContains(t, c.InstanceTypes, "m5.large", "no option of the claim is a type the pod does not fit")
		assert.Contains(t, d.Details["memoryCapacity"], "observed: 15000Mi, reported by Node ip-10-0-0-9 launched from ami-amd64")
	})
	t.Run("an observation of another AMI is not used", func(t *testing.T) {
		w := memoryWorld(t, memoryPod("big"))
		observe(t, w.store, "m5.large", "ami-retired", 7000)
		c, _ := launched(t, w)
		assert.Equal(t, "m5.large", c.InstanceType)
	})
	t.Run("a larger observation makes room the estimate did not", func(t *testing.T) {
		// 7,300 MiB asked: more than the estimate's 6,903 allocatable, less than 8,000 − 674.
		p := memoryPod("bigger")
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("7300Mi")
		w := memoryWorld(t, p)
		observe(t, w.store, "m5.large", "ami-amd64", 8000)
		c, d := launched(t, w)
		assert.Equal(t, "m5.large", c.InstanceType)
		assert.Contains(t, d.Details["memoryCapacity"], "observed: 8000Mi")
	})
}

// withObservedMemory picks, per type, the AMI the class launches that type with: an arm64 type's
// observation counts under the arm64 AMI, not the amd64 one.
func TestWithObservedMemoryUsesTheTypesAMI(t *testing.T) {
	cat := &instancetypes.Catalog{Types: []instancetypes.Type{
		{Info: scheduling.InstanceInfo{Name: "m6g.large", VCPUs: 2, MemoryMiB: 8192, Architecture: "arm64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a"}, OnDemand: true},
		{Info: scheduling.InstanceInfo{Name: "m5.large", VCPUs: 2, MemoryMiB: 8192, Architecture: "amd64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a"}, OnDemand: true},
	}}
	cfg := scheduling.NodeClassConfig{}
	types, _, err := cat.Build(cfg, flatPrices{"m6g.large": 0.077, "m5.large": 0.096}, nil)
	require.NoError(t, err)
	amis := testClass().resolved.Status.AMIs // ami-amd64 for amd64, ami-arm64 for arm64
	observed := observedMemory{}
	for _, o := range []state.MemoryObservation{
		{InstanceType: "m6g.large", ImageID: "ami-arm64", MemoryBytes: 7000 << 20},
		{InstanceType: "m5.large", ImageID: "ami-arm64", MemoryBytes: 6000 << 20}, // never launched so: ignored
	} {
		observed[o.Key()] = o
	}
	got, used, err := withObservedMemory(cat, cfg, types, amis, observed)
	require.NoError(t, err)
	byName := map[string]*scheduling.InstanceType{}
	for _, it := range got {
		byName[it.Name] = it
	}
	assert.Equal(t, int64(7000)<<20, byName["m6g.large"].Capacity.Memory)
	assert.Equal(t, int64(7577)<<20, byName["m5.large"].Capacity.Memory, "the estimate: m5.large launches from ami-amd64")
	assert.Equal(t, []string{"m6g.large"}, keys(used))
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Consolidation plans its replacements from PrepareLaunches, and the dry run from Plan: both read the
// observations as a run does.
func TestPrepareLaunchesAndPlanUseObservedMemory(t *testing.T) {
	ctx := context.Background()
	w := memoryWorld(t)
	observe(t, w.store, "m5.large", "ami-amd64", 7000)
	l, err := w.p.PrepareLaunches(ctx)
	require.NoError(t, err)
	require.Len(t, l.Pools, 1)
	byName := map[string]*scheduling.InstanceType{}
	for _, it := range l.Pools[0].InstanceTypes {
		byName[it.Name] = it
	}
	assert.Equal(t, int64(7000)<<20, byName["m5.large"].Capacity.Memory)
	assert.Equal(t, int64(15155)<<20, byName["m5.xlarge"].Capacity.Memory, "estimated: nothing observed")

	p := memoryPod("big")
	plan, err := w.p.Plan(ctx, []*corev1.Pod{&p})
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 1)
	assert.NotContains(t, plan.NewClaims[0].InstanceTypeOptions, "m5.large")
}
