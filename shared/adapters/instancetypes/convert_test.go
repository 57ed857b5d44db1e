package instancetypes

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ec2Type(name string, archs ...ec2types.ArchitectureType) ec2types.InstanceTypeInfo {
	return ec2types.InstanceTypeInfo{
		InstanceType:                 ec2types.InstanceType(name),
		ProcessorInfo:                &ec2types.ProcessorInfo{SupportedArchitectures: archs, Manufacturer: aws.String("AWS")},
		SupportedVirtualizationTypes: []ec2types.VirtualizationType{ec2types.VirtualizationTypeHvm},
		VCpuInfo:                     &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(4)},
		MemoryInfo:                   &ec2types.MemoryInfo{SizeInMiB: aws.Int64(16384)},
		NetworkInfo: &ec2types.NetworkInfo{
			MaximumNetworkInterfaces: aws.Int32(8), Ipv4AddressesPerInterface: aws.Int32(15),
			DefaultNetworkCardIndex: aws.Int32(0),
			NetworkCards: []ec2types.NetworkCardInfo{{NetworkCardIndex: aws.Int32(0), MaximumNetworkInterfaces: aws.Int32(4),
				BaselineBandwidthInGbps: aws.Float64(1.25)}},
		},
	}
}

func TestInfoRefusesWhatCannotBeAnEKSNode(t *testing.T) {
	cases := []struct {
		name    string
		it      ec2types.InstanceTypeInfo
		wantErr string
	}{
		{"mac", ec2Type("mac2.metal", ec2types.ArchitectureTypeArm64Mac), "arm64_mac cannot run EKS Linux nodes"},
		{"i386 only", ec2Type("t1.micro", ec2types.ArchitectureTypeI386), "i386 cannot run"},
		{"paravirtual", func() ec2types.InstanceTypeInfo {
			it := ec2Type("m1.small", ec2types.ArchitectureTypeX8664)
			it.SupportedVirtualizationTypes = []ec2types.VirtualizationType{ec2types.VirtualizationTypeParavirtual}
			return it
		}(), "no HVM"},
		{"no memory", func() ec2types.InstanceTypeInfo {
			it := ec2Type("x.large", ec2types.ArchitectureTypeX8664)
			it.MemoryInfo = nil
			return it
		}(), "missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Info(tc.it)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestInfoReadsTheDefaultNetworkCardAndAccelerators(t *testing.T) {
	it := ec2Type("g5g.xlarge", ec2types.ArchitectureTypeArm64)
	it.GpuInfo = &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{Name: aws.String("T4g"), Manufacturer: aws.String("NVIDIA"),
		Count: aws.Int32(1), MemoryInfo: &ec2types.GpuDeviceMemoryInfo{SizeInMiB: aws.Int32(15360)}}}}
	info, err := Info(it)
	require.NoError(t, err)
	assert.Equal(t, "arm64", info.Architecture)
	assert.EqualValues(t, 4, info.MaxENIs, "the default network card's interfaces, not the instance total")
	assert.EqualValues(t, 15, info.IPv4PerENI)
	assert.EqualValues(t, 1250, info.NetworkBandwidthMbps)
	require.Len(t, info.GPUs, 1)
	assert.EqualValues(t, 15360, info.GPUs[0].MemoryMiB)

	x := ec2Type("m5.large", ec2types.ArchitectureTypeI386, ec2types.ArchitectureTypeX8664)
	info, err = Info(x)
	require.NoError(t, err)
	assert.Equal(t, "amd64", info.Architecture, "i386+x86_64 types run amd64 nodes")
}

// The EBS bandwidth is EC2's maximum for types EBS-optimized by default (c5.large: 4,750 Mbps, not its
// 650 Mbps baseline), and absent for the others, as Karpenter labels it.
func TestInfoTakesTheMaximumEBSBandwidthOfDefaultOptimizedTypes(t *testing.T) {
	it := ec2Type("c5.large", ec2types.ArchitectureTypeX8664)
	it.EbsInfo = &ec2types.EbsInfo{EbsOptimizedSupport: ec2types.EbsOptimizedSupportDefault,
		EbsOptimizedInfo: &ec2types.EbsOptimizedInfo{BaselineBandwidthInMbps: aws.Int32(650), MaximumBandwidthInMbps: aws.Int32(4750)}}
	info, err := Info(it)
	require.NoError(t, err)
	assert.EqualValues(t, 4750, info.EBSBandwidthMbps)

	it = ec2Type("c3.large", ec2types.ArchitectureTypeX8664)
	it.EbsInfo = &ec2types.EbsInfo{EbsOptimizedSupport: ec2types.EbsOptimizedSupportSupported,
		EbsOptimizedInfo: &ec2types.EbsOptimizedInfo{BaselineBandwidthInMbps: aws.Int32(450), MaximumBandwidthInMbps: aws.Int32(450)}}
	info, err = Info(it)
	require.NoError(t, err)
	assert.Zero(t, info.EBSBandwidthMbps, "not EBS-optimized by default: no label")
}

// Pods asking for vpc.amazonaws.com/pod-eni (security groups for pods) need a type with branch
// interfaces: EC2 does not report them, so they come from the shipped table.
func TestInfoCountsBranchInterfaces(t *testing.T) {
	info, err := Info(ec2Type("m5.large", ec2types.ArchitectureTypeX8664))
	require.NoError(t, err)
	assert.EqualValues(t, 9, info.BranchInterfaces)
	info, err = Info(ec2Type("t3.micro", ec2types.ArchitectureTypeX8664))
	require.NoError(t, err)
	assert.Zero(t, info.BranchInterfaces)
}
