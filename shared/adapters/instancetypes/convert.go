package instancetypes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Info converts one DescribeInstanceTypes entry into what the scheduler's allocatable model needs. It
// returns an error saying why when the type cannot be an EKS Linux node.
func Info(it ec2types.InstanceTypeInfo) (scheduling.InstanceInfo, error) {
	name := string(it.InstanceType)
	arch, err := architecture(it)
	if err != nil {
		return scheduling.InstanceInfo{}, fmt.Errorf("%s: %w", name, err)
	}
	if !slices.Contains(it.SupportedVirtualizationTypes, ec2types.VirtualizationTypeHvm) {
		return scheduling.InstanceInfo{}, fmt.Errorf("%s: no HVM virtualization", name)
	}
	if it.VCpuInfo == nil || it.MemoryInfo == nil || it.NetworkInfo == nil {
		return scheduling.InstanceInfo{}, fmt.Errorf("%s: vCPU, memory or network information missing", name)
	}
	info := scheduling.InstanceInfo{
		Name:         name,
		VCPUs:        int64(aws.ToInt32(it.VCpuInfo.DefaultVCpus)),
		MemoryMiB:    aws.ToInt64(it.MemoryInfo.SizeInMiB),
		Architecture: arch,
		Hypervisor:   string(it.Hypervisor),
		BareMetal:    aws.ToBool(it.BareMetal),
	}
	if p := it.ProcessorInfo; p != nil {
		info.CPUManufacturer = aws.ToString(p.Manufacturer)
		info.SustainedClockGHz = aws.ToFloat64(p.SustainedClockSpeedInGhz)
	}
	network(&info, it.NetworkInfo)
	// The EBS bandwidth label is the type's maximum (burst) bandwidth, and only for types that are
	// EBS-optimized by default, as Karpenter labels it: selectors written for Karpenter's values pick
	// the same types here.
	if ebs := it.EbsInfo; ebs != nil && ebs.EbsOptimizedInfo != nil && ebs.EbsOptimizedSupport == ec2types.EbsOptimizedSupportDefault {
		info.EBSBandwidthMbps = int64(aws.ToInt32(ebs.EbsOptimizedInfo.MaximumBandwidthInMbps))
	}
	if st := it.InstanceStorageInfo; st != nil && st.NvmeSupport != ec2types.EphemeralNvmeSupportUnsupported {
		info.LocalNVMeGB = aws.ToInt64(st.TotalSizeInGB)
	}
	info.NitroEnclaves = it.NitroEnclavesSupport == ec2types.NitroEnclavesSupportSupported
	info.BranchInterfaces = BranchInterfaces(name)
	accelerators(&info, it)
	if info.VCPUs <= 0 || info.MemoryMiB <= 0 {
		return scheduling.InstanceInfo{}, fmt.Errorf("%s: reports %d vCPUs and %d MiB", name, info.VCPUs, info.MemoryMiB)
	}
	return info, nil
}

// architecture maps EC2's architectures to Kubernetes' (amd64, arm64).
func architecture(it ec2types.InstanceTypeInfo) (string, error) {
	if it.ProcessorInfo == nil {
		return "", fmt.Errorf("no processor information")
	}
	archs := it.ProcessorInfo.SupportedArchitectures
	switch {
	case slices.Contains(archs, ec2types.ArchitectureTypeX8664):
		return "amd64", nil
	case slices.Contains(archs, ec2types.ArchitectureTypeArm64):
		return "arm64", nil
	}
	names := make([]string, len(archs))
	for i, a := range archs {
		names[i] = string(a)
	}
	return "", fmt.Errorf("architecture %s cannot run EKS Linux nodes", strings.Join(names, ","))
}

func network(info *scheduling.InstanceInfo, n *ec2types.NetworkInfo) {
	info.IPv4PerENI = int64(aws.ToInt32(n.Ipv4AddressesPerInterface))
	info.MaxENIs = int64(aws.ToInt32(n.MaximumNetworkInterfaces))
	info.EncryptionInTransit = aws.ToBool(n.EncryptionInTransitSupported)
	if n.EfaInfo != nil {
		info.MaxEFAInterfaces = int64(aws.ToInt32(n.EfaInfo.MaximumEfaInterfaces))
	}
	card := aws.ToInt32(n.DefaultNetworkCardIndex)
	for _, c := range n.NetworkCards {
		if aws.ToInt32(c.NetworkCardIndex) != card {
			continue
		}
		// The default card's interfaces are the ones the VPC CNI can use for pods.
		info.MaxENIs = int64(aws.ToInt32(c.MaximumNetworkInterfaces))
		if bw := aws.ToFloat64(c.BaselineBandwidthInGbps); bw > 0 {
			info.NetworkBandwidthMbps = int64(bw * 1000)
		}
	}
}

func accelerators(info *scheduling.InstanceInfo, it ec2types.InstanceTypeInfo) {
	if it.GpuInfo != nil {
		for _, g := range it.GpuInfo.Gpus {
			a := scheduling.Accelerator{Name: aws.ToString(g.Name), Manufacturer: aws.ToString(g.Manufacturer), Count: int64(aws.ToInt32(g.Count))}
			if g.MemoryInfo != nil {
				a.MemoryMiB = int64(aws.ToInt32(g.MemoryInfo.SizeInMiB))
			}
			info.GPUs = append(info.GPUs, a)
		}
	}
	if it.NeuronInfo != nil {
		for _, d := range it.NeuronInfo.NeuronDevices {
			a := scheduling.Accelerator{Name: aws.ToString(d.Name), Manufacturer: "aws", Count: int64(aws.ToInt32(d.Count))}
			if d.CoreInfo != nil {
				a.Cores = int64(aws.ToInt32(d.CoreInfo.Count))
			}
			if d.MemoryInfo != nil {
				a.MemoryMiB = int64(aws.ToInt32(d.MemoryInfo.SizeInMiB))
			}
			info.Neuron = append(info.Neuron, a)
		}
	}
}
