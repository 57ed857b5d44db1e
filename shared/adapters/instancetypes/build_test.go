package instancetypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestWithObservedMemory(t *testing.T) {
	cat := &Catalog{Types: []Type{
		{Info: scheduling.InstanceInfo{Name: "m5.large", VCPUs: 2, MemoryMiB: 8192, Architecture: "amd64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true},
		{Info: scheduling.InstanceInfo{Name: "c5.large", VCPUs: 2, MemoryMiB: 4096, Architecture: "amd64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true},
	}}
	cfg := scheduling.NodeClassConfig{}
	types, _, err := cat.Build(cfg, tablePrices{"m5.large": 0.096, "c5.large": 0.085}, nil)
	require.NoError(t, err)
	require.Len(t, types, 2)
	estimate := map[string]*scheduling.InstanceType{types[0].Name: types[0], types[1].Name: types[1]}
	// 8192 MiB less ceil(7.5 %) = 7577 MiB estimated; the registered node said 7,400 MiB.
	require.Equal(t, int64(7577)<<20, estimate["m5.large"].Capacity.Memory)

	got, err := cat.WithObservedMemory(types, cfg, map[string]int64{"m5.large": 7400 << 20})
	require.NoError(t, err)
	byName := map[string]*scheduling.InstanceType{got[0].Name: got[0], got[1].Name: got[1]}
	m5 := byName["m5.large"]
	assert.Equal(t, int64(7400)<<20, m5.Capacity.Memory)
	assert.Equal(t, estimate["m5.large"].Allocatable.Memory-(177<<20), m5.Allocatable.Memory, "allocatable follows capacity down")
	assert.Equal(t, estimate["m5.large"].Offerings, m5.Offerings)
	assert.Equal(t, estimate["m5.large"].Requirements, m5.Requirements)
	assert.Same(t, estimate["c5.large"], byName["c5.large"], "a type without an observation is left as built")
	assert.Equal(t, int64(7577)<<20, estimate["m5.large"].Capacity.Memory, "the input slice is not changed")

	_, err = cat.WithObservedMemory(types, cfg, map[string]int64{"r5.large": 1 << 30})
	require.NoError(t, err, "an observation of a type not built for the class is not used")
}
