package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInstanceTypeHasAvailableOffering(t *testing.T) {
	it := NewInstanceType("t", nil, Resources{}, Resources{}, []Offering{{Zone: "a", CapacityType: CapacityTypeSpot, Price: 1, Available: true}})
	assert.True(t, it.HasAvailableOffering(Requirements{}, nil))
	assert.False(t, it.HasAvailableOffering(NewRequirements(MustRequirement(LabelZone, OpIn, "b")), nil))
	assert.False(t, it.HasAvailableOffering(Requirements{}, UnavailableOfferings{{InstanceType: "t", Zone: "a", CapacityType: CapacityTypeSpot}: true}))
	assert.Equal(t, "t/a/spot", OfferingKey{InstanceType: "t", Zone: "a", CapacityType: CapacityTypeSpot}.String())
}
