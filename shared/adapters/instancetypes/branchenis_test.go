package instancetypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestTheShippedBranchTableParses(t *testing.T) {
	table, err := ParseBranchTable(branchTableJSON)
	require.NoError(t, err)
	assert.Greater(t, len(table.Types), 1000, "every trunking-compatible type")
	assert.EqualValues(t, 9, BranchInterfaces("m5.large"))
	assert.EqualValues(t, 18, BranchInterfaces("c5.xlarge"))
	assert.Zero(t, BranchInterfaces("t3.micro"), "no trunking: no branch interfaces")
	assert.Zero(t, BranchInterfaces("x99.unknown"))
}

func TestBranchTableRoundTripsAndRefusesBadFiles(t *testing.T) {
	in := BranchTable{Source: "test", GeneratedAt: "2026-08-06T04:02:42Z", Types: map[string]int64{"m5.large": 9, "c5.xlarge": 18}}
	b, err := EncodeBranchTable(in)
	require.NoError(t, err)
	out, err := ParseBranchTable(b)
	require.NoError(t, err)
	assert.Equal(t, in, out)

	for name, bad := range map[string]string{
		"no source": `{"generatedAt":"2026-08-06T04:02:42Z","types":{}}`,
		"no date":   `{"source":"x","types":{}}`,
		"negative":  `{"source":"x","generatedAt":"2026-08-06T04:02:42Z","types":{"m5.large":-1}}`,
		"not json":  `{`,
	} {
		_, err := ParseBranchTable([]byte(bad))
		assert.Error(t, err, name)
	}
}

// A type with branch interfaces advertises them as vpc.amazonaws.com/pod-eni, so the scheduler can place
// a pod that asks for one; a type without them does not.
func TestBuiltTypesAdvertisePodENIs(t *testing.T) {
	cat := &Catalog{}
	for _, name := range []string{"m5.large", "t3.micro"} {
		info, err := Info(ec2Type(name, "x86_64"))
		require.NoError(t, err)
		cat.Types = append(cat.Types, Type{Info: info, Zones: []string{"us-east-1a"}, OnDemand: true})
	}
	types, _, err := cat.Build(scheduling.NodeClassConfig{}, tablePrices{"m5.large": 0.096, "t3.micro": 0.0104}, nil)
	require.NoError(t, err)
	require.Len(t, types, 2)
	got := map[string]int64{}
	for _, it := range types {
		got[it.Name] = it.Allocatable.Extended[scheduling.ResourcePodENI]
	}
	assert.Equal(t, map[string]int64{"m5.large": 9, "t3.micro": 0}, got)
}
