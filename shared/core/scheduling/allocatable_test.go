package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestKubeReservedCPU(t *testing.T) {
	// 60m for the first core, 10m for the second, 5m each for cores 3–4, 2.5m for each core above 4.
	for vcpus, want := range map[int64]int64{1: 60, 2: 70, 3: 75, 4: 80, 8: 90, 16: 110, 96: 310} {
		assert.Equal(t, want, KubeReservedCPU(vcpus), "vcpus=%d", vcpus)
	}
}

func TestKubeReservedMemory(t *testing.T) {
	assert.Equal(t, (11*29+255)*mib, KubeReservedMemory(29))
	assert.Equal(t, (11*110+255)*mib, KubeReservedMemory(110))
}

func TestENILimitedPods(t *testing.T) {
	tests := []struct {
		name     string
		info     InstanceInfo
		reserved int64
		want     int64
	}{
		{name: "m5.large", info: InstanceInfo{MaxENIs: 3, IPv4PerENI: 10}, want: 29},
		{name: "m5.xlarge", info: InstanceInfo{MaxENIs: 4, IPv4PerENI: 15}, want: 58},
		{name: "m5.24xlarge", info: InstanceInfo{MaxENIs: 15, IPv4PerENI: 50}, want: 737},
		{name: "reserved ENI", info: InstanceInfo{MaxENIs: 3, IPv4PerENI: 10}, reserved: 1, want: 20},
		{name: "EFA-only interface on card 0", info: InstanceInfo{MaxENIs: 4, IPv4PerENI: 15, EFAOnlyENIsOnCard0: 1}, want: 44},
		{name: "no usable ENI", info: InstanceInfo{MaxENIs: 1, IPv4PerENI: 10}, reserved: 1, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, ENILimitedPods(tt.info, tt.reserved)) })
	}
}

func TestMemoryCapacity(t *testing.T) {
	// 16384 MiB − ceil(16384 × 0.075 = 1228.8) = 15155 MiB.
	assert.Equal(t, 15155*mib, MemoryCapacity(InstanceInfo{MemoryMiB: 16384, Architecture: "amd64"}, DefaultVMMemoryOverheadPercent))
	// arm64 loses 64 MiB first: 16320 − ceil(1224) = 15096 MiB.
	assert.Equal(t, 15096*mib, MemoryCapacity(InstanceInfo{MemoryMiB: 16384, Architecture: "arm64"}, DefaultVMMemoryOverheadPercent))
	assert.Equal(t, 16384*mib, MemoryCapacity(InstanceInfo{MemoryMiB: 16384}, 0))
}

func m5xlarge() InstanceInfo {
	return InstanceInfo{Name: "m5.xlarge", VCPUs: 4, MemoryMiB: 16384, Architecture: "amd64", MaxENIs: 4, IPv4PerENI: 15, Hypervisor: "nitro", CPUManufacturer: "Intel", SustainedClockGHz: 3.1}
}

func int32p(v int32) *int32 { return &v }

func TestAWSAllocatable(t *testing.T) {
	tests := []struct {
		name string
		cfg  NodeClassConfig
		info func(*InstanceInfo)
		want Resources
	}{
		{
			// cpu 4000 − 80; memory 15155 − (11×58+255) − 100 MiB; storage 20Gi − 1Gi − 2Gi; pods 58.
			name: "defaults (AL2023)",
			want: Resources{CPU: 3920, Memory: 14162 * mib, EphemeralStorage: 17 * gib, Pods: 58},
		},
		{
			name: "maxPods 110 keeps ENI-limited kube-reserved on AL2023",
			cfg:  NodeClassConfig{Kubelet: KubeletConfig{MaxPods: int32p(110)}},
			want: Resources{CPU: 3920, Memory: 14162 * mib, EphemeralStorage: 17 * gib, Pods: 110},
		},
		{
			name: "maxPods 110 on Bottlerocket reserves for 110 pods",
			cfg:  NodeClassConfig{AMIFamily: AMIFamilyBottlerocket, Kubelet: KubeletConfig{MaxPods: int32p(110)}},
			want: Resources{CPU: 3920, Memory: (15155 - 11*110 - 255 - 100) * mib, EphemeralStorage: 17 * gib, Pods: 110},
		},
		{
			name: "podsPerCore caps density",
			cfg:  NodeClassConfig{Kubelet: KubeletConfig{PodsPerCore: int32p(10)}},
			want: Resources{CPU: 3920, Memory: 14162 * mib, EphemeralStorage: 17 * gib, Pods: 40},
		},
		{
			name: "Windows uses 110 pods",
			cfg:  NodeClassConfig{AMIFamily: AMIFamilyWindows2022},
			want: Resources{CPU: 3920, Memory: (15155 - 11*110 - 255 - 100) * mib, EphemeralStorage: 17 * gib, Pods: 110, Extended: map[string]int64{ResourcePrivateIPv4: 14}},
		},
		{
			name: "kubeReserved, systemReserved and evictionHard overrides",
			cfg: NodeClassConfig{Kubelet: KubeletConfig{
				KubeReserved:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")},
				SystemReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi")},
				EvictionHard:   map[string]string{"memory.available": "500Mi", "nodefs.available": "100%"},
			}},
			want: Resources{CPU: 3800, Memory: (15155 - 893 - 100 - 500) * mib, EphemeralStorage: 19 * gib, Pods: 58},
		},
		{
			name: "bigger root volume",
			cfg:  NodeClassConfig{RootVolumeBytes: 100 * gib},
			want: Resources{CPU: 3920, Memory: 14162 * mib, EphemeralStorage: 89 * gib, Pods: 58},
		},
		{
			// A registered m5.xlarge reported 14,900 MiB: kube-reserved and eviction come off that, not off
			// the 15,155 MiB estimate.
			name: "observed memory replaces the estimate",
			cfg:  NodeClassConfig{ObservedMemory: map[string]int64{"m5.xlarge": 14900 * mib}},
			want: Resources{CPU: 3920, Memory: (14900 - 893 - 100) * mib, EphemeralStorage: 17 * gib, Pods: 58},
		},
		{
			name: "a percentage eviction threshold is taken of the observed memory",
			cfg: NodeClassConfig{ObservedMemory: map[string]int64{"m5.xlarge": 10000 * mib},
				Kubelet: KubeletConfig{EvictionHard: map[string]string{"memory.available": "10%"}}},
			want: Resources{CPU: 3920, Memory: (10000 - 893 - 1000) * mib, EphemeralStorage: 17 * gib, Pods: 58},
		},
		{
			name: "an observation of another type is not used",
			cfg:  NodeClassConfig{ObservedMemory: map[string]int64{"m5.large": 7000 * mib}},
			want: Resources{CPU: 3920, Memory: 14162 * mib, EphemeralStorage: 17 * gib, Pods: 58},
		},
		{
			name: "GPUs become extended resources",
			info: func(i *InstanceInfo) {
				i.GPUs = []Accelerator{{Name: "T4", Manufacturer: "NVIDIA", Count: 1, MemoryMiB: 16384}}
			},
			want: Resources{CPU: 3920, Memory: 14162 * mib, EphemeralStorage: 17 * gib, Pods: 58, Extended: map[string]int64{ResourceNVIDIAGPU: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := m5xlarge()
			if tt.info != nil {
				tt.info(&info)
			}
			it, err := NewAWSInstanceType(info, tt.cfg, []Offering{{Zone: "us-west-2a", CapacityType: CapacityTypeOnDemand, Price: 0.192, Available: true}})
			require.NoError(t, err)
			assert.Equal(t, tt.want, it.Allocatable)
			assert.Equal(t, info.VCPUs*1000, it.Capacity.CPU)
		})
	}
}

func TestAWSOverheadRejectsBadEviction(t *testing.T) {
	_, err := NewAWSInstanceType(m5xlarge(), NodeClassConfig{Kubelet: KubeletConfig{EvictionHard: map[string]string{"memory.available": "lots"}}}, nil)
	assert.ErrorContains(t, err, "invalid quantity")
	_, err = NewAWSInstanceType(m5xlarge(), NodeClassConfig{Kubelet: KubeletConfig{EvictionHard: map[string]string{"nodefs.available": "150%"}}}, nil)
	assert.ErrorContains(t, err, "invalid percentage")
}

func TestAWSLabels(t *testing.T) {
	info := m5xlarge()
	info.Name = "c5d.2xlarge"
	info.LocalNVMeGB = 200
	l := AWSLabels(info, NodeClassConfig{})
	assert.Equal(t, "c", l[LabelInstanceCategory])
	assert.Equal(t, "5", l[LabelInstanceGeneration])
	assert.Equal(t, "c5d", l[LabelInstanceFamily])
	assert.Equal(t, "2xlarge", l[LabelInstanceSize])
	assert.Equal(t, "4", l[LabelInstanceCPU])
	assert.Equal(t, "16384", l[LabelInstanceMemory])
	assert.Equal(t, "intel", l[LabelInstanceCPUManufacturer])
	assert.Equal(t, "3100", l[LabelInstanceCPUSustainedClock])
	assert.Equal(t, "200", l[LabelInstanceLocalNVMe])
	assert.Equal(t, "linux", l[LabelOS])
	assert.Equal(t, "amd64", l[LabelArch])

	info.Name = "u-6tb1.metal"
	l = AWSLabels(info, NodeClassConfig{})
	assert.Equal(t, "u", l[LabelInstanceCategory])
	assert.Equal(t, "1", l[LabelInstanceGeneration])
	assert.Equal(t, "metal", l[LabelInstanceSize])

	info.Name = "c7i-flex.large"
	assert.Equal(t, "true", AWSLabels(info, NodeClassConfig{})[LabelInstanceCapabilityFlex])
}

// EC2 names some accelerators with spaces ("Radeon Pro V520"): the labels take Karpenter's lower-kebab
// form, and a name that cannot be a label value at all is left out, since one invalid value fails the
// Node's registration patch.
func TestAcceleratorLabelsAreValidLabelValues(t *testing.T) {
	info := m5xlarge()
	info.Name = "g4ad.xlarge"
	info.GPUs = []Accelerator{{Name: "Radeon Pro V520", Manufacturer: "AMD", Count: 1, MemoryMiB: 8192}}
	l := AWSLabels(info, NodeClassConfig{})
	assert.Equal(t, "radeon-pro-v520", l[LabelInstanceGPUName])
	assert.Equal(t, "amd", l[LabelInstanceGPUManufacturer])

	info.Name = "dl1.24xlarge"
	info.GPUs = []Accelerator{{Name: "Gaudi HL-205", Manufacturer: "Habana", Count: 8}}
	assert.Equal(t, "gaudi-hl-205", AWSLabels(info, NodeClassConfig{})[LabelInstanceGPUName])

	info.GPUs = nil
	info.Neuron = []Accelerator{{Name: "Inferentia 2", Manufacturer: "aws", Count: 1}}
	assert.Equal(t, "inferentia-2", AWSLabels(info, NodeClassConfig{})[LabelInstanceAcceleratorName])

	info.Neuron = []Accelerator{{Name: "Accel (rev/2)", Manufacturer: "aws", Count: 1}}
	l = AWSLabels(info, NodeClassConfig{})
	assert.NotContains(t, l, LabelInstanceAcceleratorName)
	for k, v := range l {
		assert.Empty(t, validation.IsValidLabelValue(v), "%s=%q", k, v)
	}
}
