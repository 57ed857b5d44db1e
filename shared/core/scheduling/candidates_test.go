package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewPoolStateCandidates(t *testing.T) {
	mk := func(name, arch string, cpu int64, price float64, available bool) *InstanceType {
		r := Resources{CPU: cpu * 1000, Memory: 8 << 30, Pods: 50}
		return NewInstanceType(name, map[string]string{LabelArch: arch}, r, r, []Offering{{Zone: "a", CapacityType: CapacityTypeSpot, Price: price, Available: available}})
	}
	catalog := []*InstanceType{mk("amd-big", "amd64", 8, 0.4, true), mk("arm", "arm64", 4, 0.1, true), mk("amd-small", "amd64", 2, 0.1, true), mk("amd-gone", "amd64", 4, 0.01, false)}
	ps, err := newPoolState(NodePool{Name: "p", Requirements: []NodeSelectorRequirement{{Key: LabelArch, Operator: OpIn, Values: []string{"amd64"}}}}, catalog, nil, nil)
	require.NoError(t, err)
	var names []string
	for _, c := range ps.candidates {
		names = append(names, c.it.Name)
	}
	assert.Equal(t, []string{"amd-small", "amd-big"}, names, "compatible, available, cheapest first")
	assert.Nil(t, ps.preparedErr)

	none, err := newPoolState(NodePool{Name: "q", Requirements: []NodeSelectorRequirement{{Key: LabelArch, Operator: OpIn, Values: []string{"s390x"}}}}, catalog, nil, nil)
	require.NoError(t, err)
	require.NotNil(t, none.preparedErr)
	assert.Equal(t, ConstraintOffering, none.preparedErr.Constraint)
}

func TestShortfall(t *testing.T) {
	cands := []*candidate{sizedCandidate("wide", 16, 4, 1, "a"), sizedCandidate("tall", 2, 64, 1, "a")}
	r := shortfall("p", cands, Resources{CPU: 8000, Memory: 8 << 30, Pods: 1})
	assert.Equal(t, ConstraintResources, r.Constraint)
	assert.Contains(t, r.Detail, "closest wide")
	assert.Contains(t, r.Detail, "short on [memory]")
}
