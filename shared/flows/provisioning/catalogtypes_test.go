package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestEntryInstanceType(t *testing.T) {
	offerings := []scheduling.Offering{{Zone: "us-east-1a", CapacityType: scheduling.CapacityTypeSpot, Price: 0.1, Available: true}}
	flat := CatalogEntry{Name: "m5.xlarge", CPUMillis: 4000, MemoryMiB: 16384, Pods: 58, Arch: "amd64", OS: "linux", Offerings: offerings}
	withGPU := CatalogEntry{Name: "g5.xlarge", CPUMillis: 4000, MemoryMiB: 16384, Pods: 58, GPUs: 1, Arch: "amd64", Offerings: offerings}
	given := flat
	given.Allocatable = &ResourceAmounts{CPUMillis: 3500, MemoryMiB: 12000.5, EphemeralStorageMiB: 10240, Pods: 30}
	// issueFormat is an entry as the scheduling issue describes it: allocatable with CPU, memory and pods.
	issueFormat := withGPU
	issueFormat.Allocatable = &ResourceAmounts{CPUMillis: 3500, MemoryMiB: 12000, Pods: 30}
	maxPods := int32(20)

	cases := []struct {
		name   string
		entry  CatalogEntry
		cfg    scheduling.NodeClassConfig
		alloc  scheduling.Resources
		labels map[string]string
	}{
		{
			name:  "allocatable computed with the AWS model",
			entry: flat,
			// 4000m − 80m kube-reserved; 15155Mi capacity − (11·58+255)Mi − 100Mi eviction.
			alloc:  scheduling.Resources{CPU: 3920, Memory: 14162 << 20, EphemeralStorage: 17 << 30, Pods: 58},
			labels: map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux", scheduling.LabelInstanceFamily: "m5", scheduling.LabelInstanceSize: "xlarge"},
		},
		{
			name:  "node class maxPods lowers pods and reserved memory stays ENI-based",
			entry: flat,
			cfg:   scheduling.NodeClassConfig{Kubelet: scheduling.KubeletConfig{MaxPods: &maxPods}},
			alloc: scheduling.Resources{CPU: 3920, Memory: 14162 << 20, EphemeralStorage: 17 << 30, Pods: 20},
		},
		{
			name:  "GPUs become an extended resource",
			entry: withGPU,
			alloc: scheduling.Resources{CPU: 3920, Memory: 14162 << 20, EphemeralStorage: 17 << 30, Pods: 58, Extended: map[string]int64{scheduling.ResourceNVIDIAGPU: 1}},
		},
		{
			name:  "allocatable given is used as given, whatever the node class",
			entry: given,
			cfg:   scheduling.NodeClassConfig{Kubelet: scheduling.KubeletConfig{MaxPods: &maxPods}},
			alloc: scheduling.Resources{CPU: 3500, Memory: 12000<<20 + 1<<19, EphemeralStorage: 10 << 30, Pods: 30},
		},
		{
			name:  "allocatable without storage or GPUs takes them from the model",
			entry: issueFormat,
			alloc: scheduling.Resources{CPU: 3500, Memory: 12000 << 20, EphemeralStorage: 17 << 30, Pods: 30, Extended: map[string]int64{scheduling.ResourceNVIDIAGPU: 1}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it, err := tc.entry.InstanceType(tc.cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.alloc, it.Allocatable)
			assert.True(t, it.Requirements[scheduling.LabelInstanceType].Has(tc.entry.Name))
			assert.True(t, it.Requirements[scheduling.LabelZone].Has("us-east-1a"))
			for k, v := range tc.labels {
				require.Contains(t, it.Requirements, k)
				assert.Equal(t, []string{v}, it.Requirements[k].Values(), k)
			}
		})
	}
}

func TestComputesAllocatable(t *testing.T) {
	f := &CatalogFile{InstanceTypes: []CatalogEntry{{Name: "a", Allocatable: &ResourceAmounts{}}, {Name: "b"}}}
	assert.True(t, f.ComputesAllocatable())
	f.InstanceTypes = f.InstanceTypes[:1]
	assert.False(t, f.ComputesAllocatable())
}

func TestBuildReportsBadEvictionThreshold(t *testing.T) {
	f := &CatalogFile{InstanceTypes: []CatalogEntry{{Name: "m5.large", CPUMillis: 2000, MemoryMiB: 8192, Pods: 29}}}
	_, err := f.Build(scheduling.NodeClassConfig{Kubelet: scheduling.KubeletConfig{EvictionHard: map[string]string{"memory.available": "lots"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "instance type m5.large")
}
