package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLaunchChoice(t *testing.T) {
	mk := func(name string, offerings ...Offering) *candidate {
		return &candidate{it: NewInstanceType(name, nil, Resources{}, Resources{}, offerings)}
	}
	cheapOD := mk("cheap", Offering{Zone: "b", CapacityType: CapacityTypeOnDemand, Price: 0.05, Available: true})
	spot := mk("spotty", Offering{Zone: "b", CapacityType: CapacityTypeSpot, Price: 0.08, Available: true}, Offering{Zone: "a", CapacityType: CapacityTypeSpot, Price: 0.08, Available: true})
	name, o := launchChoice([]*candidate{cheapOD, spot}, Requirements{}, nil)
	assert.Equal(t, "spotty", name, "spot takes precedence over on-demand")
	assert.Equal(t, Offering{Zone: "a", CapacityType: CapacityTypeSpot, Price: 0.08, Available: true}, o, "equal prices: the first zone")

	name, _ = launchChoice([]*candidate{cheapOD, spot}, NewRequirements(MustRequirement(LabelCapacityType, OpIn, CapacityTypeOnDemand)), nil)
	assert.Equal(t, "cheap", name)
}
