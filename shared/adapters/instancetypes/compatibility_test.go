package instancetypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// An a1 node never joins with an AL2023 AMI, so an AL2023 class (the default family) has no a1 types,
// and says why; other families keep them.
func TestAL2023ClassesLeaveOutA1(t *testing.T) {
	cat := &Catalog{Types: []Type{
		{Info: scheduling.InstanceInfo{Name: "a1.large", VCPUs: 2, MemoryMiB: 4096, Architecture: "arm64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a"}, OnDemand: true},
		{Info: scheduling.InstanceInfo{Name: "m6g.large", VCPUs: 2, MemoryMiB: 8192, Architecture: "arm64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a"}, OnDemand: true},
	}}
	prices := tablePrices{"a1.large": 0.051, "m6g.large": 0.077}
	names := func(types []*scheduling.InstanceType) (out []string) {
		for _, it := range types {
			out = append(out, it.Name)
		}
		return out
	}
	for _, family := range []string{"", scheduling.AMIFamilyAL2023} {
		types, skipped, err := cat.Build(scheduling.NodeClassConfig{AMIFamily: family}, prices, nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"m6g.large"}, names(types), "family %q", family)
		assert.Contains(t, skipped["a1.large"], "AL2023")
	}
	types, _, err := cat.Build(scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyAL2}, prices, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a1.large", "m6g.large"}, names(types))
}
