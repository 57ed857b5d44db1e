package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalizeLabel(t *testing.T) {
	tests := map[string]string{
		"failure-domain.beta.kubernetes.io/zone":   LabelZone,
		"failure-domain.beta.kubernetes.io/region": LabelRegion,
		"beta.kubernetes.io/arch":                  LabelArch,
		"beta.kubernetes.io/os":                    LabelOS,
		"beta.kubernetes.io/instance-type":         LabelInstanceType,
		LabelZone:                                  LabelZone,
		"example.com/team":                         "example.com/team",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) { assert.Equal(t, want, NormalizeLabel(in)) })
	}
}

func TestIsRestrictedLabel(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{LabelHostname, true},
		{"karpenter.sh/custom", true},
		{"sub.karpenter.sh/custom", true},
		{LabelNodePool, false},
		{LabelCapacityType, false},
		{LabelZone, false},
		{LabelInstanceFamily, false},
		{"example.com/team", false},
		{"team", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) { assert.Equal(t, tt.want, IsRestrictedLabel(tt.key)) })
	}
}

func TestWellKnownLabels(t *testing.T) {
	for _, k := range []string{LabelNodePool, LabelZone, LabelRegion, LabelInstanceType, LabelArch, LabelOS, LabelCapacityType, LabelWindowsBuild, LabelInstanceCategory, LabelInstanceGPUCount, LabelZoneID} {
		assert.True(t, IsWellKnownLabel(k), k)
	}
	assert.False(t, IsWellKnownLabel(LabelHostname))
	assert.False(t, IsWellKnownLabel("example.com/team"))
	keys := WellKnownLabels()
	assert.IsIncreasing(t, keys)
	assert.Contains(t, keys, LabelZoneID)
}
