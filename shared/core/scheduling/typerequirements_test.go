package scheduling_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

const (
	zoneIDA, zoneIDB = "usw2-az1", "usw2-az2"
	testRegion       = "us-west-2"
)

// hardwareCatalog is three AWS types, cheapest first: c6g.large with neither local NVMe nor GPU,
// c6gd.large with 118 GB of local NVMe, and g4dn.xlarge with one NVIDIA T4 and 125 GB of NVMe. Their
// offerings in zones a and b price alike and know their zone ids when zoneIDs is set.
func hardwareCatalog(t *testing.T, cfg scheduling.NodeClassConfig) []*scheduling.InstanceType {
	t.Helper()
	infos := []struct {
		info  scheduling.InstanceInfo
		price float64
	}{
		{scheduling.InstanceInfo{Name: "c6g.large", VCPUs: 2, MemoryMiB: 4096, Architecture: "arm64", CPUManufacturer: "aws",
			MaxENIs: 3, IPv4PerENI: 10, Hypervisor: "nitro", EBSBandwidthMbps: 4750, NetworkBandwidthMbps: 750}, 0.03},
		{scheduling.InstanceInfo{Name: "c6gd.large", VCPUs: 2, MemoryMiB: 4096, Architecture: "arm64", CPUManufacturer: "aws",
			MaxENIs: 3, IPv4PerENI: 10, Hypervisor: "nitro", LocalNVMeGB: 118}, 0.04},
		{scheduling.InstanceInfo{Name: "g4dn.xlarge", VCPUs: 4, MemoryMiB: 16384, Architecture: "amd64", CPUManufacturer: "intel",
			MaxENIs: 3, IPv4PerENI: 10, Hypervisor: "nitro", LocalNVMeGB: 125,
			GPUs: []scheduling.Accelerator{{Name: "T4", Manufacturer: "NVIDIA", Count: 1, MemoryMiB: 16384}}}, 0.2},
	}
	var out []*scheduling.InstanceType
	for _, x := range infos {
		var offerings []scheduling.Offering
		for _, z := range []string{zoneA, zoneB} {
			offerings = append(offerings, scheduling.Offering{Zone: z, ZoneID: cfg.ZoneIDs[z], CapacityType: scheduling.CapacityTypeSpot, Price: x.price, Available: true})
		}
		it, err := scheduling.NewAWSInstanceType(x.info, cfg, offerings)
		require.NoError(t, err)
		out = append(out, it)
	}
	return out
}

var zoneIDs = map[string]string{zoneA: zoneIDA, zoneB: zoneIDB}

// solveOne solves pods under pools over types and returns the plan, failing on an error.
func solveOne(t *testing.T, types []*scheduling.InstanceType, pools []scheduling.NodePool, pods []*corev1.Pod) *scheduling.Plan {
	t.Helper()
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools, InstanceTypes: types})
	require.NoError(t, err)
	return plan
}

// A NodePool or pod requiring hardware a type lacks must not get that type: the type requires the
// label absent rather than leaving it undefined (which Intersects ignores).
func TestHardwareRequirementsRuleOutTypesWithoutIt(t *testing.T) {
	cases := []struct {
		name         string
		pool         scheduling.NodePool
		pod          PodOptions
		wantType     string
		wantLabelKey string // every option of the claim carries this label
	}{
		{name: "nodepool requires local NVMe", pool: NodePool("nvme", Requirement(scheduling.LabelInstanceLocalNVMe, scheduling.OpExists)),
			wantType: "c6gd.large", wantLabelKey: scheduling.LabelInstanceLocalNVMe},
		{name: "nodepool requires over 100 GB of local NVMe", pool: NodePool("nvme", Requirement(scheduling.LabelInstanceLocalNVMe, scheduling.OpGt, "100")),
			wantType: "c6gd.large", wantLabelKey: scheduling.LabelInstanceLocalNVMe},
		{name: "nodepool requires a GPU", pool: NodePool("gpu", Requirement(scheduling.LabelInstanceGPUCount, scheduling.OpGte, "1")),
			wantType: "g4dn.xlarge", wantLabelKey: scheduling.LabelInstanceGPUCount},
		{name: "pod selects a GPU name without requesting a GPU", pool: NodePool("default"),
			pod:      PodOptions{NodeSelector: map[string]string{scheduling.LabelInstanceGPUName: "t4"}},
			wantType: "g4dn.xlarge", wantLabelKey: scheduling.LabelInstanceGPUName},
		{name: "pod requires a GPU manufacturer by expression", pool: NodePool("default"),
			pod:      PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{In(scheduling.LabelInstanceGPUManufacturer, "nvidia")}},
			wantType: "g4dn.xlarge", wantLabelKey: scheduling.LabelInstanceGPUManufacturer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			types := hardwareCatalog(t, scheduling.NodeClassConfig{})
			tc.pod.Name, tc.pod.CPU, tc.pod.Memory = "app", "500m", "512Mi"
			plan := solveOne(t, types, []scheduling.NodePool{tc.pool}, []*corev1.Pod{Pod(tc.pod)})
			require.Empty(t, plan.Unschedulable)
			require.Len(t, plan.NewClaims, 1)
			c := plan.NewClaims[0]
			assert.Equal(t, tc.wantType, c.InstanceType)
			byName := map[string]*scheduling.InstanceType{}
			for _, it := range types {
				byName[it.Name] = it
			}
			for _, name := range c.InstanceTypeOptions {
				assert.Contains(t, byName[name].Requirements.Labels(), tc.wantLabelKey, "option %s", name)
			}
		})
	}
}

// A pod that selects hardware no type has stays pending, naming the label.
func TestHardwareNoTypeHasLeavesThePodPending(t *testing.T) {
	types := hardwareCatalog(t, scheduling.NodeClassConfig{})
	pod := Pod(PodOptions{Name: "app", CPU: "500m", NodeSelector: map[string]string{scheduling.LabelInstanceAcceleratorName: "inferentia"}})
	plan := solveOne(t, types, []scheduling.NodePool{NodePool("default")}, []*corev1.Pod{pod})
	assert.Empty(t, plan.NewClaims)
	require.Len(t, plan.Unschedulable, 1)
}

// The requirements of a type for labels it lacks: absent keys never become labels, flex is "false",
// region and the Windows build are labels where known, and a type with a reserved offering leaves the
// reservation keys to its offerings.
func TestInstanceTypeRequirementsForLabelsItLacks(t *testing.T) {
	types := hardwareCatalog(t, scheduling.NodeClassConfig{Region: testRegion, ZoneIDs: zoneIDs})
	c6g := types[0]
	for _, key := range []string{scheduling.LabelInstanceLocalNVMe, scheduling.LabelInstanceGPUName, scheduling.LabelInstanceGPUManufacturer,
		scheduling.LabelInstanceGPUCount, scheduling.LabelInstanceGPUMemory, scheduling.LabelInstanceAcceleratorName,
		scheduling.LabelInstanceAcceleratorMaker, scheduling.LabelInstanceAcceleratorCount, scheduling.LabelWindowsBuild,
		scheduling.LabelCapacityReservationID, scheduling.LabelCapacityReservationType, scheduling.LabelCapacityReservationInterrupt} {
		require.True(t, c6g.Requirements.Has(key), key)
		assert.Equal(t, scheduling.OpDoesNotExist, c6g.Requirements.Get(key).Operator(), key)
	}
	labels := c6g.Requirements.Labels()
	want := map[string]string{
		scheduling.LabelInstanceCapabilityFlex: "false", scheduling.LabelRegion: testRegion, scheduling.LabelInstanceFamily: "c6g",
		scheduling.LabelInstanceEBSBandwidth: "4750", scheduling.LabelInstanceCPUManufacturer: "aws",
	}
	for k, v := range want {
		assert.Equal(t, v, labels[k], k)
	}
	for _, key := range []string{scheduling.LabelInstanceLocalNVMe, scheduling.LabelInstanceGPUName, scheduling.LabelWindowsBuild,
		scheduling.LabelCapacityReservationID, scheduling.LabelZoneID} {
		assert.NotContains(t, labels, key)
	}
	assert.Equal(t, []string{zoneIDA, zoneIDB}, c6g.Requirements.Get(scheduling.LabelZoneID).Values())

	reserved := scheduling.NewInstanceType("m5.large", map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux"},
		scheduling.Resources{CPU: 2000}, scheduling.Resources{CPU: 1900},
		[]scheduling.Offering{spot(zoneA, 0.04), reservation("cr-1", zoneA, 1)})
	for _, key := range []string{scheduling.LabelCapacityReservationID, scheduling.LabelCapacityReservationType} {
		assert.False(t, reserved.Requirements.Has(key), "a type with a reserved offering leaves %s to its offerings", key)
	}
	assert.NotContains(t, reserved.Requirements.Labels(), scheduling.LabelCapacityReservationID)
	assert.False(t, reserved.Requirements.Has(scheduling.LabelZoneID), "offerings without zone ids leave zone-id unconstrained")

	win, err := scheduling.NewAWSInstanceType(scheduling.InstanceInfo{Name: "m5.large", VCPUs: 2, MemoryMiB: 8192, Architecture: "amd64", MaxENIs: 3, IPv4PerENI: 10},
		scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyWindows2022}, []scheduling.Offering{spot(zoneA, 0.1)})
	require.NoError(t, err)
	assert.Equal(t, "10.0.20348", win.Requirements.Labels()[scheduling.LabelWindowsBuild])
}

// A pod selecting a zone id, a NodePool requiring one, and a topology spread on zone-id all place new
// claims in the zones those ids name.
func TestZoneIDRequirementsAndSpread(t *testing.T) {
	types := hardwareCatalog(t, scheduling.NodeClassConfig{ZoneIDs: zoneIDs})
	big := func(n int, o PodOptions) []*corev1.Pod {
		o.Name, o.CPU, o.Memory = "app", "1500m", "1Gi"
		return Pods(n, o)
	}

	t.Run("pod selects a zone id", func(t *testing.T) {
		plan := solveOne(t, types, []scheduling.NodePool{NodePool("default")}, big(1, PodOptions{NodeSelector: map[string]string{scheduling.LabelZoneID: zoneIDB}}))
		require.Len(t, plan.NewClaims, 1)
		assert.Equal(t, zoneB, plan.NewClaims[0].Zone)
	})
	t.Run("nodepool requires a zone id", func(t *testing.T) {
		pool := NodePool("b", Requirement(scheduling.LabelZoneID, scheduling.OpIn, zoneIDB))
		plan := solveOne(t, types, []scheduling.NodePool{pool}, big(2, PodOptions{}))
		require.Len(t, plan.NewClaims, 2)
		for _, c := range plan.NewClaims {
			assert.Equal(t, zoneB, c.Zone)
		}
	})
	t.Run("pod selects a zone id no offering has", func(t *testing.T) {
		plan := solveOne(t, types, []scheduling.NodePool{NodePool("default")}, big(1, PodOptions{NodeSelector: map[string]string{scheduling.LabelZoneID: "usw2-az4"}}))
		assert.Empty(t, plan.NewClaims)
		assert.Len(t, plan.Unschedulable, 1)
	})
	t.Run("topology spread on zone-id", func(t *testing.T) {
		spread := []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelZoneID, WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		plan := solveOne(t, types, []scheduling.NodePool{NodePool("default")}, big(4, PodOptions{Owner: "web", Labels: map[string]string{"app": "web"}, Spread: spread}))
		require.Empty(t, plan.Unschedulable)
		var zones []string
		for _, c := range plan.NewClaims {
			zones = append(zones, c.Zone)
		}
		sort.Strings(zones)
		assert.Equal(t, []string{zoneA, zoneA, zoneB, zoneB}, zones)
	})
	t.Run("zone ids unknown: a zone-id selector constrains nothing, as before", func(t *testing.T) {
		old := hardwareCatalog(t, scheduling.NodeClassConfig{})
		plan := solveOne(t, old, []scheduling.NodePool{NodePool("default")}, big(1, PodOptions{NodeSelector: map[string]string{scheduling.LabelZoneID: zoneIDB}}))
		require.Len(t, plan.NewClaims, 1)
		assert.Empty(t, plan.Unschedulable)
	})
}
