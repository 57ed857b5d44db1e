package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func offeringType() *InstanceType {
	return NewInstanceType("m5.large", map[string]string{LabelArch: "amd64"}, Resources{CPU: 2000}, Resources{CPU: 1900}, []Offering{
		{Zone: "us-west-2a", CapacityType: CapacityTypeOnDemand, Price: 0.096, Available: true},
		{Zone: "us-west-2a", CapacityType: CapacityTypeSpot, Price: 0.040, Available: true},
		{Zone: "us-west-2b", CapacityType: CapacityTypeSpot, Price: 0.035, Available: false},
		{Zone: "us-west-2c", CapacityType: CapacityTypeSpot, Price: 0.038, Available: true},
		{Zone: "us-west-2c", CapacityType: CapacityTypeReserved, Price: 0.100, Available: true, ReservationID: "cr-1", ReservationCapacity: 1},
	})
}

func TestCheapestOffering(t *testing.T) {
	it := offeringType()
	tests := []struct {
		name        string
		reqs        Requirements
		unavailable UnavailableOfferings
		want        Offering
		none        bool
	}{
		{name: "cheapest available", want: it.Offerings[3]},
		{name: "zone restricted", reqs: NewRequirements(MustRequirement(LabelZone, OpIn, "us-west-2a")), want: it.Offerings[1]},
		{name: "on-demand only", reqs: NewRequirements(MustRequirement(LabelCapacityType, OpIn, CapacityTypeOnDemand)), want: it.Offerings[0]},
		{name: "marked unavailable", unavailable: UnavailableOfferings{{InstanceType: "m5.large", Zone: "us-west-2c", CapacityType: CapacityTypeSpot}: true}, want: it.Offerings[1]},
		{name: "catalog says unavailable", reqs: NewRequirements(MustRequirement(LabelZone, OpIn, "us-west-2b"), MustRequirement(LabelCapacityType, OpIn, CapacityTypeSpot)), none: true},
		{name: "reservation id must match", reqs: NewRequirements(MustRequirement(LabelCapacityType, OpIn, CapacityTypeReserved), MustRequirement(LabelCapacityReservationID, OpIn, "cr-2")), none: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := tt.reqs
			if reqs == nil {
				reqs = Requirements{}
			}
			got, ok := it.CheapestOffering(reqs, tt.unavailable)
			assert.Equal(t, !tt.none, ok)
			assert.Equal(t, !tt.none, it.HasAvailableOffering(reqs, tt.unavailable))
			if !tt.none {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestLaunchOfferingPrecedence(t *testing.T) {
	it := offeringType()
	got, ok := it.LaunchOffering(Requirements{}, nil)
	require.True(t, ok)
	assert.Equal(t, CapacityTypeReserved, got.CapacityType, "reserved capacity is used first even when dearer")
	got, _ = it.LaunchOffering(NewRequirements(MustRequirement(LabelCapacityType, OpNotIn, CapacityTypeReserved)), nil)
	assert.Equal(t, Offering{Zone: "us-west-2c", CapacityType: CapacityTypeSpot, Price: 0.038, Available: true}, got)
	got, _ = it.LaunchOffering(NewRequirements(MustRequirement(LabelCapacityType, OpIn, CapacityTypeOnDemand)), nil)
	assert.Equal(t, CapacityTypeOnDemand, got.CapacityType)

	for name, o := range map[string]Offering{
		"full":  {Zone: "us-west-2c", CapacityType: CapacityTypeReserved, Price: 0.001, Available: true, ReservationID: "cr-2"},
		"no id": {Zone: "us-west-2c", CapacityType: CapacityTypeReserved, Price: 0.001, Available: true, ReservationCapacity: 5},
	} {
		bare := NewInstanceType("m5.large", nil, Resources{}, Resources{}, []Offering{o, {Zone: "us-west-2c", CapacityType: CapacityTypeOnDemand, Price: 0.096, Available: true}})
		got, _ = bare.LaunchOffering(Requirements{}, nil)
		assert.Equal(t, CapacityTypeOnDemand, got.CapacityType, "a reservation that is %s is not launched into", name)
	}

	assert.Negative(t, CompareCapacityTypes(CapacityTypeReserved, CapacityTypeSpot))
	assert.Negative(t, CompareCapacityTypes(CapacityTypeSpot, CapacityTypeOnDemand))
}

func TestNewInstanceTypeRequirements(t *testing.T) {
	it := offeringType()
	assert.Equal(t, []string{"us-west-2a", "us-west-2b", "us-west-2c"}, it.Requirements.Get(LabelZone).Values())
	assert.Equal(t, []string{CapacityTypeOnDemand, CapacityTypeReserved, CapacityTypeSpot}, it.Requirements.Get(LabelCapacityType).Values())
	assert.Equal(t, []string{"m5.large"}, it.Requirements.Get(LabelInstanceType).Values())
	assert.Equal(t, []string{"amd64"}, it.Requirements.Get(LabelArch).Values())
}

func TestOrderByPrice(t *testing.T) {
	mk := func(name string, price float64, available bool) *InstanceType {
		return NewInstanceType(name, nil, Resources{}, Resources{}, []Offering{{Zone: "a", CapacityType: CapacityTypeOnDemand, Price: price, Available: available}})
	}
	types := []*InstanceType{mk("c", 0.2, true), mk("gone", 0.01, false), mk("b", 0.1, true), mk("a", 0.2, true)}
	OrderByPrice(types, Requirements{}, nil)
	var names []string
	for _, it := range types {
		names = append(names, it.Name)
	}
	assert.Equal(t, []string{"b", "a", "c", "gone"}, names)
}

// TestOfferingReservationLabels checks the reservation labels offerings carry, as Karpenter's do: a spot
// or on-demand offering has capacity-reservation-id, -type and -interruptible DoesNotExist, so a pod
// requiring one is never placed on it; a reserved offering has each In [its value].
func TestOfferingReservationLabels(t *testing.T) {
	od := Offering{Zone: "us-west-2a", CapacityType: CapacityTypeOnDemand, Price: 0.096, Available: true}
	odcr := Offering{Zone: "us-west-2a", CapacityType: CapacityTypeReserved, Price: 0.001, Available: true,
		ReservationID: "cr-1", ReservationCapacity: 1}
	icr := Offering{Zone: "us-west-2a", CapacityType: CapacityTypeReserved, Price: 0.001, Available: true,
		ReservationID: "cr-2", ReservationCapacity: 1, Interruptible: true}
	block := Offering{Zone: "us-west-2a", CapacityType: CapacityTypeReserved, Price: 0.001, Available: true,
		ReservationID: "cr-3", ReservationCapacity: 1, ReservationType: ReservationTypeCapacityBlock}
	tests := []struct {
		name string
		reqs Requirements
		want []Offering // of od, odcr, icr, block
	}{
		{name: "no requirement", reqs: Requirements{}, want: []Offering{od, odcr, icr, block}},
		{name: "reservation id exists", reqs: NewRequirements(MustRequirement(LabelCapacityReservationID, OpExists)), want: []Offering{odcr, icr, block}},
		{name: "reservation id in", reqs: NewRequirements(MustRequirement(LabelCapacityReservationID, OpIn, "cr-2")), want: []Offering{icr}},
		{name: "reservation id not in", reqs: NewRequirements(MustRequirement(LabelCapacityReservationID, OpNotIn, "cr-2")), want: []Offering{od, odcr, block}},
		{name: "reservation id does not exist", reqs: NewRequirements(MustRequirement(LabelCapacityReservationID, OpDoesNotExist)), want: []Offering{od}},
		{name: "type default", reqs: NewRequirements(MustRequirement(LabelCapacityReservationType, OpIn, ReservationTypeDefault)), want: []Offering{odcr, icr}},
		{name: "type capacity-block", reqs: NewRequirements(MustRequirement(LabelCapacityReservationType, OpIn, ReservationTypeCapacityBlock)), want: []Offering{block}},
		{name: "interruptible true", reqs: NewRequirements(MustRequirement(LabelCapacityReservationInterrupt, OpIn, "true")), want: []Offering{icr}},
		{name: "interruptible false", reqs: NewRequirements(MustRequirement(LabelCapacityReservationInterrupt, OpIn, "false")), want: []Offering{odcr, block}},
		{name: "interruptible not in true", reqs: NewRequirements(MustRequirement(LabelCapacityReservationInterrupt, OpNotIn, "true")), want: []Offering{od, odcr, block}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := NewInstanceType("m5.large", nil, Resources{}, Resources{}, []Offering{od, odcr, icr, block})
			var got []Offering
			for i := range it.Offerings {
				if it.compatibleOffering(&it.Offerings[i], tt.reqs, nil) {
					got = append(got, it.Offerings[i])
				}
				assert.Equal(t, it.compatibleOffering(&it.Offerings[i], tt.reqs, nil), ReservationLabelsAllow(&it.Offerings[i], tt.reqs))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestUnavailableReservationBlocksOnlyItself checks that a reservation marked unavailable (its owner
// reclaimed it) takes out that reservation's offering alone: other reservations and the type's spot
// and on-demand offerings stay.
func TestUnavailableReservationBlocksOnlyItself(t *testing.T) {
	it := NewInstanceType("m5.large", nil, Resources{}, Resources{}, []Offering{
		{Zone: "us-west-2a", CapacityType: CapacityTypeReserved, Price: 0.001, Available: true, ReservationID: "cr-1", ReservationCapacity: 1},
		{Zone: "us-west-2a", CapacityType: CapacityTypeReserved, Price: 0.002, Available: true, ReservationID: "cr-2", ReservationCapacity: 1},
		{Zone: "us-west-2a", CapacityType: CapacityTypeOnDemand, Price: 0.096, Available: true},
	})
	u := UnavailableOfferings{{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: CapacityTypeReserved, ReservationID: "cr-1"}: true}
	got, ok := it.LaunchOffering(Requirements{}, u)
	require.True(t, ok)
	assert.Equal(t, "cr-2", got.ReservationID)
	assert.True(t, u.Blocks("m5.large", &it.Offerings[0]))
	assert.False(t, u.Blocks("m5.large", &it.Offerings[1]))
	assert.False(t, u.Blocks("m5.large", &it.Offerings[2]))
	whole := UnavailableOfferings{{InstanceType: "m5.large", Zone: "us-west-2a", CapacityType: CapacityTypeReserved}: true}
	assert.True(t, whole.Blocks("m5.large", &it.Offerings[1]), "a type-wide mark still takes every reservation of it")
}
