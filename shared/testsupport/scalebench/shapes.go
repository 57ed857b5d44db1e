package scalebench

import (
	"fmt"
	"strings"
)

// shape is an EC2 instance type as the generator needs it: what the Node reports (capacity, Karpenter's
// instance labels) and how many pods it holds. The figures are EC2's (and moto's) for the type.
type shape struct {
	Name      string
	VCPU      int
	MemoryMiB int64
	// ENIs and IPsPerENI give the VPC CNI's max pods: ENIs*(IPsPerENI-1)+2.
	ENIs, IPsPerENI int
	NetworkMbps     int
	// Weight is how often the generator picks the type.
	Weight int
}

// shapes are the types the benchmark NodePools allow (c/m/r, generation 5 and later, amd64), with
// 8-vCPU types most common, as in a typical general-purpose EKS fleet.
var shapes = []shape{
	{Name: "m5.2xlarge", VCPU: 8, MemoryMiB: 32768, ENIs: 4, IPsPerENI: 15, NetworkMbps: 2500, Weight: 5},
	{Name: "m6i.2xlarge", VCPU: 8, MemoryMiB: 32768, ENIs: 4, IPsPerENI: 15, NetworkMbps: 3125, Weight: 5},
	{Name: "r5.2xlarge", VCPU: 8, MemoryMiB: 65536, ENIs: 4, IPsPerENI: 15, NetworkMbps: 2500, Weight: 2},
	{Name: "c6i.2xlarge", VCPU: 8, MemoryMiB: 16384, ENIs: 4, IPsPerENI: 15, NetworkMbps: 3125, Weight: 2},
	{Name: "m5.4xlarge", VCPU: 16, MemoryMiB: 65536, ENIs: 8, IPsPerENI: 30, NetworkMbps: 5000, Weight: 2},
	{Name: "c6i.4xlarge", VCPU: 16, MemoryMiB: 32768, ENIs: 8, IPsPerENI: 30, NetworkMbps: 6250, Weight: 1},
}

// bigShape is the type of the node the termination scenario drains: 110 pods fit it.
var bigShape = shape{Name: "m5.12xlarge", VCPU: 48, MemoryMiB: 196608, ENIs: 8, IPsPerENI: 30, NetworkMbps: 12000}

// MaxPods is the VPC CNI's pod limit for the type.
func (s shape) MaxPods() int { return s.ENIs*(s.IPsPerENI-1) + 2 }

// family, size, category and generation split the type's name as Karpenter's instance labels do.
func (s shape) family() string { return strings.SplitN(s.Name, ".", 2)[0] }
func (s shape) size() string   { return strings.SplitN(s.Name, ".", 2)[1] }
func (s shape) category() string {
	return s.Name[:1]
}
func (s shape) generation() string {
	f := s.family()
	return f[1:2]
}

// allocatableMilliCPU is what Karpenter (and the EKS AMI) reserve for the kubelet and system: 6% of the
// first core, 1% of the second, 0.5% of the next two, 0.25% of the rest.
func (s shape) allocatableMilliCPU() int64 {
	reserved := 60.0
	if s.VCPU > 1 {
		reserved += 10
	}
	if s.VCPU > 2 {
		reserved += 5 * float64(min(s.VCPU, 4)-2)
	}
	if s.VCPU > 4 {
		reserved += 2.5 * float64(s.VCPU-4)
	}
	return int64(s.VCPU)*1000 - int64(reserved)
}

// allocatableMemoryMiB takes the kubelet reservation (255 MiB + 11 MiB per pod), the 100 MiB eviction
// threshold and the ~7.5% the hypervisor and kernel keep out of what EC2 sells.
func (s shape) allocatableMemoryMiB() int64 {
	capacity := s.capacityMemoryMiB()
	return capacity - 255 - 11*int64(s.MaxPods()) - 100
}

func (s shape) capacityMemoryMiB() int64 { return s.MemoryMiB * 925 / 1000 }

func (s shape) String() string {
	return fmt.Sprintf("%s (%d vCPU, %d MiB)", s.Name, s.VCPU, s.MemoryMiB)
}
