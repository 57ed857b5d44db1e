package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestZoneStep(t *testing.T) {
	s := &solver{zoneSteps: map[zoneStepKey]*classStep{}}
	st := &classStep{Attempt: Attempt{Requirements: NewRequirements(MustRequirement(LabelArch, OpIn, "arm64")), Relaxed: "x"}, sig: "arch", base: "arch"}
	z := s.zoneStep(st, "us-west-2b")
	assert.Equal(t, "kubernetes.io/arch In [arm64], topology.kubernetes.io/zone In [us-west-2b]", z.Requirements.String())
	assert.Equal(t, "arch|zone=us-west-2b", z.sig)
	assert.Equal(t, "arch", z.base)
	assert.Equal(t, "x", z.Relaxed)
	assert.Same(t, z, s.zoneStep(st, "us-west-2b"), "cached")
	assert.False(t, st.Requirements.Has(LabelZone), "the original step is untouched")
}

func TestSlotAndClaimZone(t *testing.T) {
	assert.Equal(t, "a", slotZone(&nodeSlot{reqs: RequirementsFromLabels(map[string]string{LabelZone: "a"})}))
	assert.Equal(t, "", slotZone(&nodeSlot{reqs: Requirements{}}))
	assert.Equal(t, "", claimZone(&claim{reqs: NewRequirements(MustRequirement(LabelZone, OpIn, "a", "b"))}))
	assert.Equal(t, "b", claimZone(&claim{reqs: NewRequirements(MustRequirement(LabelZone, OpIn, "b"))}))
}
