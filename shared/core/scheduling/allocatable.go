package scheduling

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30

	// DefaultVMMemoryOverheadPercent is the share of memory the hypervisor and firmware hide from the OS.
	DefaultVMMemoryOverheadPercent = 0.075
	// DefaultRootVolumeBytes is the root EBS volume size when the NodeClass does not set one.
	DefaultRootVolumeBytes = 20 * gib
	// windowsDefaultMaxPods is the pod density on families without ENI-limited density.
	windowsDefaultMaxPods = 110
)

// AMI families, which change how pod density and kube-reserved memory are computed.
const (
	AMIFamilyAL2          = "AL2"
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyWindows2025  = "Windows2025"
)

// Accelerator describes GPUs or other accelerators of one kind on an instance type.
type Accelerator struct {
	Name         string
	Manufacturer string // e.g. "nvidia", "amd", "habana", "aws"
	Count        int64
	MemoryMiB    int64
	Cores        int64 // Neuron cores, for Neuron devices
}

// InstanceInfo is the part of EC2's DescribeInstanceTypes answer the allocatable model needs.
type InstanceInfo struct {
	Name                 string
	VCPUs                int64
	MemoryMiB            int64
	Architecture         string // amd64 or arm64
	CPUManufacturer      string
	SustainedClockGHz    float64
	MaxENIs              int64 // on the default network card
	IPv4PerENI           int64
	EFAOnlyENIsOnCard0   int64
	MaxEFAInterfaces     int64
	BranchInterfaces     int64 // pod ENIs when trunking is supported
	GPUs                 []Accelerator
	Neuron               []Accelerator
	LocalNVMeGB          int64
	Hypervisor           string
	EncryptionInTransit  bool
	NitroEnclaves        bool
	EBSBandwidthMbps     int64
	NetworkBandwidthMbps int64
	BareMetal            bool
}

// KubeletConfig holds the kubelet settings of an EC2NodeClass that change allocatable.
type KubeletConfig struct {
	MaxPods        *int32
	PodsPerCore    *int32
	KubeReserved   corev1.ResourceList
	SystemReserved corev1.ResourceList
	// EvictionHard maps signals (memory.available, nodefs.available) to a quantity or a percentage.
	EvictionHard map[string]string
}

// NodeClassConfig is what an EC2NodeClass contributes to the allocatable model.
type NodeClassConfig struct {
	AMIFamily string // defaults to AL2023
	Kubelet   KubeletConfig
	// RootVolumeBytes sizes ephemeral storage; 0 means DefaultRootVolumeBytes.
	RootVolumeBytes int64
	// InstanceStoreRAID0 uses the NVMe instance store, when the type has one, as ephemeral storage.
	InstanceStoreRAID0 bool
	// VMMemoryOverheadPercent defaults to DefaultVMMemoryOverheadPercent when nil.
	VMMemoryOverheadPercent *float64
	// ReservedENIs are kept out of the ENI-limited pod density.
	ReservedENIs int64
	// ObservedMemory is, per instance type, the memory capacity a registered Node of that type reported
	// when launched from the AMI this class launches the type with. It replaces the estimate (nominal
	// memory less the VM overhead), as Karpenter's discovered capacity does.
	ObservedMemory map[string]int64
	// Region, when known, is every instance type's topology.kubernetes.io/region; "" leaves region
	// unconstrained (a catalog file carries none).
	Region string
	// ZoneIDs maps each zone of the class's subnets to its zone id, which offerings carry
	// (topology.k8s.aws/zone-id); a zone missing here has an offering with no zone id.
	ZoneIDs map[string]string
}

// Family is the class's AMI family, AL2023 when none is set.
func (c NodeClassConfig) Family() string { return c.family() }

func (c NodeClassConfig) family() string {
	if c.AMIFamily == "" {
		return AMIFamilyAL2023
	}
	return c.AMIFamily
}

// windowsBuilds are the node.kubernetes.io/windows-build values of the Windows AMI families.
var windowsBuilds = map[string]string{
	AMIFamilyWindows2019: "10.0.17763",
	AMIFamilyWindows2022: "10.0.20348",
	AMIFamilyWindows2025: "10.0.26100",
}

func isWindows(family string) bool { return strings.HasPrefix(family, "Windows") }

// ENILimitedPods is the pod density the VPC CNI supports: usable ENIs × (IPv4 per ENI − 1) + 2, where
// usable ENIs exclude reserved ENIs and EFA-only interfaces on card 0.
func ENILimitedPods(info InstanceInfo, reservedENIs int64) int64 {
	usable := max(info.MaxENIs-reservedENIs-info.EFAOnlyENIsOnCard0, 0)
	if usable == 0 {
		return 0
	}
	return usable*(info.IPv4PerENI-1) + 2
}

// KubeReservedCPU returns the kube-reserved CPU in millicores for a number of vCPUs: 6% of the first
// core, 1% of the second, 0.5% of the third and fourth, and 0.25% of every core above four.
func KubeReservedCPU(vcpus int64) int64 {
	milli := vcpus * 1000
	ranges := []struct {
		start, end int64
		pct        float64
	}{{0, 1000, 0.06}, {1000, 2000, 0.01}, {2000, 4000, 0.005}, {4000, math.MaxInt64, 0.0025}}
	var total int64
	for _, r := range ranges {
		if milli <= r.start {
			break
		}
		total += int64(float64(min(milli, r.end)-r.start) * r.pct)
	}
	return total
}

// KubeReservedMemory returns the kube-reserved memory in bytes for a pod density: 11 MiB per pod plus
// 255 MiB.
func KubeReservedMemory(pods int64) int64 { return (11*pods + 255) * mib }

// podCapacity returns the pod density and the density used for kube-reserved memory.
func podCapacity(info InstanceInfo, cfg NodeClassConfig) (pods, reservedPods int64) {
	family := cfg.family()
	eniPods := ENILimitedPods(info, cfg.ReservedENIs)
	switch {
	case cfg.Kubelet.MaxPods != nil:
		pods = int64(*cfg.Kubelet.MaxPods)
	case isWindows(family):
		pods = windowsDefaultMaxPods
	default:
		pods = eniPods
	}
	if ppc := cfg.Kubelet.PodsPerCore; ppc != nil && *ppc > 0 && family != AMIFamilyBottlerocket {
		pods = min(pods, int64(*ppc)*info.VCPUs)
	}
	reservedPods = pods
	switch family {
	case AMIFamilyAL2, AMIFamilyAL2023, AMIFamilyCustom:
		reservedPods = eniPods
	}
	return pods, reservedPods
}

// MemoryCapacity returns the memory the OS sees: the nominal MiB (less 64 MiB on arm64) less the VM
// overhead percentage, rounded up to whole MiB.
func MemoryCapacity(info InstanceInfo, overheadPercent float64) int64 {
	sizeMiB := info.MemoryMiB
	if info.Architecture == "arm64" {
		sizeMiB -= 64
	}
	overheadMiB := int64(math.Ceil(float64(sizeMiB*mib) * overheadPercent / float64(mib)))
	return (sizeMiB - overheadMiB) * mib
}

// AWSCapacity returns the capacity of an instance type launched with cfg: its memory is the observed
// one when cfg has it for the type, else the estimate (MemoryCapacity).
func AWSCapacity(info InstanceInfo, cfg NodeClassConfig) Resources {
	overhead := DefaultVMMemoryOverheadPercent
	if cfg.VMMemoryOverheadPercent != nil {
		overhead = *cfg.VMMemoryOverheadPercent
	}
	memory := MemoryCapacity(info, overhead)
	if observed := cfg.ObservedMemory[info.Name]; observed > 0 {
		memory = observed
	}
	pods, _ := podCapacity(info, cfg)
	storage := cfg.RootVolumeBytes
	if storage == 0 {
		storage = DefaultRootVolumeBytes
	}
	if cfg.InstanceStoreRAID0 && info.LocalNVMeGB > 0 {
		storage = info.LocalNVMeGB * 1_000_000_000
	}
	r := Resources{CPU: info.VCPUs * 1000, Memory: memory, EphemeralStorage: storage, Pods: pods}
	ext := map[string]int64{}
	for _, g := range info.GPUs {
		switch strings.ToLower(g.Manufacturer) {
		case "nvidia":
			ext[ResourceNVIDIAGPU] += g.Count
		case "amd":
			ext[ResourceAMDGPU] += g.Count
		case "habana":
			ext[ResourceHabanaGaudi] += g.Count
		}
	}
	for _, n := range info.Neuron {
		ext[ResourceNeuron] += n.Count
		ext[ResourceNeuronCore] += n.Count * n.Cores
	}
	if efa := max(info.MaxEFAInterfaces, info.EFAOnlyENIsOnCard0); efa > 0 {
		ext[ResourceEFA] = efa
	}
	if info.BranchInterfaces > 0 {
		ext[ResourcePodENI] = info.BranchInterfaces
	}
	if isWindows(cfg.family()) && info.IPv4PerENI > 0 {
		ext[ResourcePrivateIPv4] = info.IPv4PerENI - 1
	}
	if len(ext) > 0 {
		r.Extended = ext
	}
	return r
}

// AWSOverhead returns kube-reserved + system-reserved + the hard eviction threshold for an instance
// type launched with cfg. User kubeReserved and systemReserved values replace the defaults per key.
func AWSOverhead(info InstanceInfo, cfg NodeClassConfig, capacity Resources) (Resources, error) {
	_, reservedPods := podCapacity(info, cfg)
	kube := Resources{CPU: KubeReservedCPU(info.VCPUs), Memory: KubeReservedMemory(reservedPods), EphemeralStorage: gib}
	for name, q := range cfg.Kubelet.KubeReserved {
		kube.set(name, q)
	}
	system := ResourcesFromList(cfg.Kubelet.SystemReserved)
	eviction := Resources{Memory: 100 * mib, EphemeralStorage: int64(math.Ceil(float64(capacity.EphemeralStorage) / 10))}
	for signal, v := range cfg.Kubelet.EvictionHard {
		var total *int64
		switch signal {
		case "memory.available":
			total = &eviction.Memory
			q, err := evictionValue(v, capacity.Memory)
			if err != nil {
				return Resources{}, fmt.Errorf("evictionHard %s: %w", signal, err)
			}
			*total = q
		case "nodefs.available":
			total = &eviction.EphemeralStorage
			q, err := evictionValue(v, capacity.EphemeralStorage)
			if err != nil {
				return Resources{}, fmt.Errorf("evictionHard %s: %w", signal, err)
			}
			*total = q
		}
	}
	return kube.Add(system).Add(eviction), nil
}

// evictionValue reads an eviction threshold: a percentage of capacity ("10%"; "100%" means none) or a
// quantity.
func evictionValue(v string, capacity int64) (int64, error) {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		p, err := strconv.ParseFloat(pct, 64)
		if err != nil || p < 0 || p > 100 {
			return 0, fmt.Errorf("invalid percentage %q", v)
		}
		if p == 100 {
			return 0, nil
		}
		return int64(math.Ceil(float64(capacity) * p / 100)), nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, fmt.Errorf("invalid quantity %q", v)
	}
	return q.Value(), nil
}

// instanceNamePattern splits names such as "c5d.2xlarge" or "u-6tb1.metal" into category and generation.
var instanceNamePattern = regexp.MustCompile(`^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.`)

// AWSLabels returns the well-known labels a node of this instance type carries.
func AWSLabels(info InstanceInfo, cfg NodeClassConfig) map[string]string {
	l := map[string]string{
		LabelArch:                        info.Architecture,
		LabelOS:                          "linux",
		LabelInstanceCPU:                 strconv.FormatInt(info.VCPUs, 10),
		LabelInstanceMemory:              strconv.FormatInt(info.MemoryMiB, 10),
		LabelInstanceHypervisor:          info.Hypervisor,
		LabelInstanceEncryptionInTransit: strconv.FormatBool(info.EncryptionInTransit),
		// Nodewright launches shared tenancy only: a pod that selects dedicated fits no instance type.
		LabelInstanceTenancy: "default",
	}
	if isWindows(cfg.family()) {
		l[LabelOS] = "windows"
		if b := windowsBuilds[cfg.family()]; b != "" {
			l[LabelWindowsBuild] = b
		}
	}
	if cfg.Region != "" {
		l[LabelRegion] = cfg.Region
	}
	family, size, _ := strings.Cut(info.Name, ".")
	l[LabelInstanceFamily], l[LabelInstanceSize] = family, size
	if m := instanceNamePattern.FindStringSubmatch(info.Name); m != nil {
		l[LabelInstanceCategory], l[LabelInstanceGeneration] = m[1], m[3]
	}
	if strings.Contains(family, "-flex") {
		l[LabelInstanceCapabilityFlex] = "true"
	}
	if info.CPUManufacturer != "" {
		setLabelValue(l, LabelInstanceCPUManufacturer, info.CPUManufacturer)
	}
	if info.SustainedClockGHz > 0 {
		l[LabelInstanceCPUSustainedClock] = strconv.FormatInt(int64(math.Round(info.SustainedClockGHz*1000)), 10)
	}
	if info.EBSBandwidthMbps > 0 {
		l[LabelInstanceEBSBandwidth] = strconv.FormatInt(info.EBSBandwidthMbps, 10)
	}
	if info.NetworkBandwidthMbps > 0 {
		l[LabelInstanceNetworkBandwidth] = strconv.FormatInt(info.NetworkBandwidthMbps, 10)
	}
	if len(info.GPUs) == 1 {
		g := info.GPUs[0]
		setLabelValue(l, LabelInstanceGPUName, g.Name)
		setLabelValue(l, LabelInstanceGPUManufacturer, g.Manufacturer)
		l[LabelInstanceGPUCount] = strconv.FormatInt(g.Count, 10)
		l[LabelInstanceGPUMemory] = strconv.FormatInt(g.MemoryMiB, 10)
	}
	if len(info.Neuron) == 1 {
		n := info.Neuron[0]
		setLabelValue(l, LabelInstanceAcceleratorName, n.Name)
		l[LabelInstanceAcceleratorMaker] = "aws"
		l[LabelInstanceAcceleratorCount] = strconv.FormatInt(n.Count, 10)
	}
	if info.LocalNVMeGB > 0 {
		l[LabelInstanceLocalNVMe] = strconv.FormatInt(info.LocalNVMeGB, 10)
	}
	l[LabelNitroSandbox] = strconv.FormatBool(info.NitroEnclaves)
	return l
}

// NewAWSInstanceType builds an instance type with the AWS allocatable model.
func NewAWSInstanceType(info InstanceInfo, cfg NodeClassConfig, offerings []Offering) (*InstanceType, error) {
	capacity := AWSCapacity(info, cfg)
	overhead, err := AWSOverhead(info, cfg, capacity)
	if err != nil {
		return nil, fmt.Errorf("computing overhead of %s: %w", info.Name, err)
	}
	alloc := capacity.Sub(overhead)
	alloc.CPU, alloc.Memory, alloc.EphemeralStorage = max(alloc.CPU, 0), max(alloc.Memory, 0), max(alloc.EphemeralStorage, 0)
	return NewInstanceType(info.Name, AWSLabels(info, cfg), capacity, alloc, offerings), nil
}
