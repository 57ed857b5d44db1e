package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNarrowStep(t *testing.T) {
	s := &solver{narrowed: map[narrowKey]*classStep{}}
	st := &classStep{Attempt: Attempt{Requirements: NewRequirements(MustRequirement(LabelArch, OpIn, "arm64")), Relaxed: "x"}, sig: "arch", base: "arch"}
	z := s.narrowStep(st, LabelZone, "us-west-2b")
	assert.Equal(t, "kubernetes.io/arch In [arm64], topology.kubernetes.io/zone In [us-west-2b]", z.Requirements.String())
	assert.Equal(t, "arch|topology.kubernetes.io/zone=us-west-2b", z.sig)
	assert.Equal(t, "arch", z.base)
	assert.Equal(t, "x", z.Relaxed)
	assert.Same(t, z, s.narrowStep(st, LabelZone, "us-west-2b"), "cached")
	assert.False(t, st.Requirements.Has(LabelZone), "the original step is untouched")
	ct := s.narrowStep(z, LabelCapacityType, "spot")
	assert.Equal(t, "arch|topology.kubernetes.io/zone=us-west-2b|karpenter.sh/capacity-type=spot", ct.sig, "narrowing composes")
	assert.True(t, ct.Requirements.Has(LabelZone))
}

func TestSingleValue(t *testing.T) {
	assert.Equal(t, "a", singleValue(RequirementsFromLabels(map[string]string{LabelZone: "a"}), LabelZone))
	assert.Equal(t, "", singleValue(Requirements{}, LabelZone))
	assert.Equal(t, "", singleValue(NewRequirements(MustRequirement(LabelZone, OpIn, "a", "b")), LabelZone))
	assert.Equal(t, "b", singleValue(NewRequirements(MustRequirement(LabelZone, OpIn, "b")), LabelZone))
}
