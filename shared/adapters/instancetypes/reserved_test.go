package instancetypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

type tablePrices map[string]float64

func (p tablePrices) OnDemand(name string) (float64, bool) { v, ok := p[name]; return v, ok }
func (p tablePrices) Spot(name, _ string) (float64, bool) {
	v, ok := p[name]
	return v * 0.4, ok
}

func TestBuildAddsReservedOfferings(t *testing.T) {
	cat := &Catalog{Types: []Type{
		{Info: scheduling.InstanceInfo{Name: "m5.large", VCPUs: 2, MemoryMiB: 8192, Architecture: "amd64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a", "us-east-1b"}, Spot: true, OnDemand: true},
		{Info: scheduling.InstanceInfo{Name: "c5.large", VCPUs: 2, MemoryMiB: 4096, Architecture: "amd64", MaxENIs: 3, IPv4PerENI: 10},
			Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true},
	}}
	prices := tablePrices{"m5.large": 0.096, "c5.large": 0.085}
	types, _, err := cat.BuildWithReservations(scheduling.NodeClassConfig{}, prices, []string{"us-east-1a", "us-east-1b"}, []Reservation{
		{ID: "cr-1", InstanceType: "m5.large", Zone: "us-east-1b", Available: 2},
		{ID: "cr-2", InstanceType: "m5.large", Zone: "us-east-1a", Available: 0},
	})
	require.NoError(t, err)
	byName := map[string]*scheduling.InstanceType{}
	for _, it := range types {
		byName[it.Name] = it
	}
	m5 := byName["m5.large"]
	require.Len(t, m5.Offerings, 6, "2 zones × spot and on-demand, and one per reservation")
	reserved := map[string]scheduling.Offering{}
	for _, o := range m5.Offerings {
		if o.CapacityType == scheduling.CapacityTypeReserved {
			reserved[o.ReservationID] = o
		}
	}
	require.Len(t, reserved, 2)
	assert.Equal(t, "us-east-1b", reserved["cr-1"].Zone)
	assert.True(t, reserved["cr-1"].Available)
	assert.False(t, reserved["cr-2"].Available, "a full reservation is unavailable")
	assert.Equal(t, 2, reserved["cr-1"].ReservationCapacity, "the solver plans at most this many instances into it")
	assert.Equal(t, 0, reserved["cr-2"].ReservationCapacity)
	assert.InDelta(t, 0.096/ReservedPriceDivisor, reserved["cr-1"].Price, 1e-15)
	assert.Contains(t, m5.Requirements.Get(scheduling.LabelCapacityType).Values(), scheduling.CapacityTypeReserved)

	best, ok := m5.LaunchOffering(scheduling.Requirements{}, nil)
	require.True(t, ok)
	assert.Equal(t, "cr-1", best.ReservationID, "reserved is launched first")
	cheapest, ok := m5.CheapestOffering(scheduling.Requirements{}, nil)
	require.True(t, ok)
	assert.Equal(t, scheduling.CapacityTypeReserved, cheapest.CapacityType, "and is the cheapest")

	assert.Len(t, byName["c5.large"].Offerings, 2, "no reservation, no reserved offering")
	plain, _, err := cat.Build(scheduling.NodeClassConfig{}, prices, nil)
	require.NoError(t, err)
	assert.Len(t, plain[0].Offerings, 4, "Build adds no reserved offering")
}

func TestReservedOfferingCarriesTheCount(t *testing.T) {
	prices := tablePrices{"m5.large": 0.096}
	cases := []struct {
		name      string
		available int32
		capacity  int
		usable    bool
	}{
		{name: "room for three", available: 3, capacity: 3, usable: true},
		{name: "room for one", available: 1, capacity: 1, usable: true},
		{name: "full", available: 0, capacity: 0},
		{name: "negative count from a bad answer", available: -1, capacity: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := ReservedOffering(Reservation{ID: "cr-1", InstanceType: "m5.large", Zone: "us-east-1a", Available: tc.available}, prices)
			assert.Equal(t, tc.capacity, o.ReservationCapacity)
			assert.Equal(t, tc.usable, o.Available)
			it := scheduling.NewInstanceType("m5.large", nil, scheduling.Resources{}, scheduling.Resources{}, []scheduling.Offering{o})
			assert.Equal(t, tc.usable, it.HasAvailableOffering(scheduling.Requirements{}, nil))
		})
	}
}

// TestReservedOfferingCarriesTypeAndInterruptible checks that a reserved offering knows its reservation's
// type and whether it is interruptible, which its capacity-reservation-type and -interruptible labels
// come from.
func TestReservedOfferingCarriesTypeAndInterruptible(t *testing.T) {
	prices := tablePrices{"m5.large": 0.096}
	o := ReservedOffering(Reservation{ID: "cr-1", InstanceType: "m5.large", Zone: "us-east-1a", Available: 1, Interruptible: true}, prices)
	assert.True(t, o.Interruptible)
	assert.Equal(t, scheduling.ReservationTypeDefault, o.ReservationTypeLabel())
	block := ReservedOffering(Reservation{ID: "cr-2", InstanceType: "m5.large", Zone: "us-east-1a", Available: 1, Type: "capacity-block"}, prices)
	assert.False(t, block.Interruptible)
	assert.Equal(t, scheduling.ReservationTypeCapacityBlock, block.ReservationTypeLabel())
}
