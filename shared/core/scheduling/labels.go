package scheduling

import (
	"strings"
)

// Well-known label keys that the scheduler understands on every provider.
const (
	LabelNodePool       = "karpenter.sh/nodepool"
	LabelCapacityType   = "karpenter.sh/capacity-type"
	LabelZone           = "topology.kubernetes.io/zone"
	LabelRegion         = "topology.kubernetes.io/region"
	LabelInstanceType   = "node.kubernetes.io/instance-type"
	LabelArch           = "kubernetes.io/arch"
	LabelOS             = "kubernetes.io/os"
	LabelWindowsBuild   = "node.kubernetes.io/windows-build"
	LabelHostname       = "kubernetes.io/hostname"
	LabelNodeRegistered = "karpenter.sh/registered"
	LabelNodeInitalized = "karpenter.sh/initialized"
)

// AWS label keys (karpenter.k8s.aws and topology.k8s.aws domains).
const (
	LabelInstanceCategory             = "karpenter.k8s.aws/instance-category"
	LabelInstanceGeneration           = "karpenter.k8s.aws/instance-generation"
	LabelInstanceFamily               = "karpenter.k8s.aws/instance-family"
	LabelInstanceSize                 = "karpenter.k8s.aws/instance-size"
	LabelInstanceCPU                  = "karpenter.k8s.aws/instance-cpu"
	LabelInstanceCPUManufacturer      = "karpenter.k8s.aws/instance-cpu-manufacturer"
	LabelInstanceCPUSustainedClock    = "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz"
	LabelInstanceMemory               = "karpenter.k8s.aws/instance-memory"
	LabelInstanceEBSBandwidth         = "karpenter.k8s.aws/instance-ebs-bandwidth"
	LabelInstanceNetworkBandwidth     = "karpenter.k8s.aws/instance-network-bandwidth"
	LabelInstanceGPUName              = "karpenter.k8s.aws/instance-gpu-name"
	LabelInstanceGPUManufacturer      = "karpenter.k8s.aws/instance-gpu-manufacturer"
	LabelInstanceGPUCount             = "karpenter.k8s.aws/instance-gpu-count"
	LabelInstanceGPUMemory            = "karpenter.k8s.aws/instance-gpu-memory"
	LabelInstanceAcceleratorName      = "karpenter.k8s.aws/instance-accelerator-name"
	LabelInstanceAcceleratorMaker     = "karpenter.k8s.aws/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount     = "karpenter.k8s.aws/instance-accelerator-count"
	LabelInstanceLocalNVMe            = "karpenter.k8s.aws/instance-local-nvme"
	LabelInstanceHypervisor           = "karpenter.k8s.aws/instance-hypervisor"
	LabelInstanceEncryptionInTransit  = "karpenter.k8s.aws/instance-encryption-in-transit-supported"
	LabelNitroSandbox                 = "karpenter.k8s.aws/nitro-sandbox"
	LabelInstanceCapabilityFlex       = "karpenter.k8s.aws/instance-capability-flex"
	LabelInstanceTenancy              = "karpenter.k8s.aws/instance-tenancy"
	LabelCapacityReservationID        = "karpenter.k8s.aws/capacity-reservation-id"
	LabelCapacityReservationType      = "karpenter.k8s.aws/capacity-reservation-type"
	LabelCapacityReservationInterrupt = "karpenter.k8s.aws/capacity-reservation-interruptible"
	LabelPlacementGroupID             = "karpenter.k8s.aws/placement-group-id"
	LabelPlacementGroupPartition      = "karpenter.k8s.aws/placement-group-partition"
	LabelEC2NodeClass                 = "karpenter.k8s.aws/ec2nodeclass"
	LabelZoneID                       = "topology.k8s.aws/zone-id"
)

// Capacity types an offering can have.
const (
	CapacityTypeReserved = "reserved"
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
)

// Well-known extended resources on AWS nodes.
const (
	ResourceNVIDIAGPU   = "nvidia.com/gpu"
	ResourceAMDGPU      = "amd.com/gpu"
	ResourceNeuron      = "aws.amazon.com/neuron"
	ResourceNeuronCore  = "aws.amazon.com/neuroncore"
	ResourceHabanaGaudi = "habana.ai/gaudi"
	ResourceEFA         = "vpc.amazonaws.com/efa"
	ResourcePodENI      = "vpc.amazonaws.com/pod-eni"
	ResourcePrivateIPv4 = "vpc.amazonaws.com/PrivateIPv4Address"
)

// wellKnownLabels are keys a pod may select on even when a NodePool does not define them, because every
// instance type or offering carries a value for them.
var wellKnownLabels = map[string]bool{
	LabelNodePool:     true,
	LabelZone:         true,
	LabelRegion:       true,
	LabelInstanceType: true,
	LabelArch:         true,
	LabelOS:           true,
	LabelCapacityType: true,
	LabelWindowsBuild: true,

	LabelInstanceCategory:             true,
	LabelInstanceGeneration:           true,
	LabelInstanceFamily:               true,
	LabelInstanceSize:                 true,
	LabelInstanceCPU:                  true,
	LabelInstanceCPUManufacturer:      true,
	LabelInstanceCPUSustainedClock:    true,
	LabelInstanceMemory:               true,
	LabelInstanceEBSBandwidth:         true,
	LabelInstanceNetworkBandwidth:     true,
	LabelInstanceGPUName:              true,
	LabelInstanceGPUManufacturer:      true,
	LabelInstanceGPUCount:             true,
	LabelInstanceGPUMemory:            true,
	LabelInstanceAcceleratorName:      true,
	LabelInstanceAcceleratorMaker:     true,
	LabelInstanceAcceleratorCount:     true,
	LabelInstanceLocalNVMe:            true,
	LabelInstanceHypervisor:           true,
	LabelInstanceEncryptionInTransit:  true,
	LabelNitroSandbox:                 true,
	LabelInstanceCapabilityFlex:       true,
	LabelInstanceTenancy:              true,
	LabelCapacityReservationID:        true,
	LabelCapacityReservationType:      true,
	LabelCapacityReservationInterrupt: true,
	LabelPlacementGroupID:             true,
	LabelPlacementGroupPartition:      true,
	LabelEC2NodeClass:                 true,
	LabelZoneID:                       true,
}

// IsWellKnownLabel reports whether key is a well-known label (core or AWS).
func IsWellKnownLabel(key string) bool { return wellKnownLabels[key] }

// WellKnownLabels returns the well-known label keys in sorted order.
func WellKnownLabels() []string { return sortedKeys(wellKnownLabels) }

// labelAliases maps deprecated label keys to the key the scheduler uses.
var labelAliases = map[string]string{
	"failure-domain.beta.kubernetes.io/zone":   LabelZone,
	"failure-domain.beta.kubernetes.io/region": LabelRegion,
	"beta.kubernetes.io/arch":                  LabelArch,
	"beta.kubernetes.io/os":                    LabelOS,
	"beta.kubernetes.io/instance-type":         LabelInstanceType,
	// The EBS CSI driver's zone key, which AWS nodes carry with the zone's value.
	"topology.ebs.csi.aws.com/zone": LabelZone,
}

// NormalizeLabel returns the current key for a deprecated label key, and key itself otherwise.
func NormalizeLabel(key string) string {
	if n, ok := labelAliases[key]; ok {
		return n
	}
	return key
}

// restrictedDomain is the label domain a pod may not select on except through well-known keys.
const restrictedDomain = "karpenter.sh"

// IsRestrictedLabel reports whether pods may not select on key: kubernetes.io/hostname, and any key in
// the karpenter.sh domain that is not well-known.
func IsRestrictedLabel(key string) bool {
	if wellKnownLabels[key] {
		return false
	}
	if key == LabelHostname {
		return true
	}
	domain, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	return domain == restrictedDomain || strings.HasSuffix(domain, "."+restrictedDomain)
}
