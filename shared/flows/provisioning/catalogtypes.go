package provisioning

import (
	"fmt"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// ComputesAllocatable reports whether some entry lacks allocatable, so that the catalog depends on the
// EC2NodeClass it is launched with.
func (f *CatalogFile) ComputesAllocatable() bool {
	for _, e := range f.InstanceTypes {
		if e.Allocatable == nil {
			return true
		}
	}
	return false
}

// Build builds the scheduler's instance types. Entries with allocatable keep it; the others get
// capacity and allocatable from the AWS model under cfg.
func (f *CatalogFile) Build(cfg scheduling.NodeClassConfig) ([]*scheduling.InstanceType, error) {
	out := make([]*scheduling.InstanceType, 0, len(f.InstanceTypes))
	for _, e := range f.InstanceTypes {
		it, err := e.InstanceType(cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// InstanceType builds one instance type (see CatalogEntry for which fields count). Capacity, when
// absent, comes from the AWS model. An allocatable given without ephemeral storage or without the
// entry's GPUs takes those from the model too, so that a file listing only CPU, memory and pods still
// schedules pods that request storage or GPUs.
func (e CatalogEntry) InstanceType(cfg scheduling.NodeClassConfig) (*scheduling.InstanceType, error) {
	info := e.info()
	capacity := scheduling.AWSCapacity(info, cfg)
	if e.Capacity != nil {
		capacity = e.Capacity.Resources()
	}
	overhead, err := scheduling.AWSOverhead(info, cfg, capacity)
	if err != nil {
		return nil, fmt.Errorf("instance type %s: %w", e.Name, err)
	}
	computed := capacity.Sub(overhead)
	computed.CPU, computed.Memory, computed.EphemeralStorage = max(computed.CPU, 0), max(computed.Memory, 0), max(computed.EphemeralStorage, 0)
	if e.Allocatable == nil {
		return scheduling.NewInstanceType(e.Name, e.labels(scheduling.AWSLabels(info, cfg)), capacity, computed, e.Offerings), nil
	}
	alloc := e.Allocatable.Resources()
	if alloc.EphemeralStorage == 0 {
		alloc.EphemeralStorage = computed.EphemeralStorage
	}
	for name, n := range computed.Extended {
		if _, ok := alloc.Extended[name]; !ok && (name == scheduling.ResourceNVIDIAGPU || name == scheduling.ResourceAMDGPU) {
			if alloc.Extended == nil {
				alloc.Extended = map[string]int64{}
			}
			alloc.Extended[name] = n
		}
	}
	return scheduling.NewInstanceType(e.Name, e.labels(nil), capacity, alloc, e.Offerings), nil
}

// info is what the AWS model needs, rebuilt from the flat fields. One ENI with pods−1 addresses makes
// the ENI-limited density equal the entry's pods, so kube-reserved memory follows it.
func (e CatalogEntry) info() scheduling.InstanceInfo {
	info := scheduling.InstanceInfo{Name: e.Name, VCPUs: e.CPUMillis / 1000, MemoryMiB: e.MemoryMiB, Architecture: e.Arch}
	if e.Pods > 1 {
		info.MaxENIs, info.IPv4PerENI = 1, e.Pods-1
	}
	if e.GPUs > 0 {
		maker := e.Labels[scheduling.LabelInstanceGPUManufacturer]
		if maker == "" {
			maker = "nvidia"
		}
		info.GPUs = []scheduling.Accelerator{{Name: e.Labels[scheduling.LabelInstanceGPUName], Manufacturer: maker, Count: e.GPUs}}
	}
	return info
}

// labels merges base (computed) labels, the arch and os fields, and the entry's labels, which win.
func (e CatalogEntry) labels(base map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	if e.Arch != "" {
		out[scheduling.LabelArch] = e.Arch
	}
	if e.OS != "" {
		out[scheduling.LabelOS] = e.OS
	}
	for k, v := range e.Labels {
		out[k] = v
	}
	return out
}
