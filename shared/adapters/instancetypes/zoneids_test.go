package instancetypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Every offering, reserved ones included, carries the id of its zone from the class's subnets; a zone
// with no known id gives offerings without one, and the type then leaves zone-id unconstrained.
func TestBuildGivesOfferingsTheirZoneIDs(t *testing.T) {
	cat := &Catalog{Types: []Type{{Info: scheduling.InstanceInfo{Name: "m5.large", VCPUs: 2, MemoryMiB: 8192, Architecture: "amd64", MaxENIs: 3, IPv4PerENI: 10},
		Zones: []string{"us-east-1a", "us-east-1b"}, Spot: true, OnDemand: true}}}
	prices := tablePrices{"m5.large": 0.096}
	cfg := scheduling.NodeClassConfig{Region: "us-east-1", ZoneIDs: map[string]string{"us-east-1a": "use1-az1", "us-east-1b": "use1-az2"}}
	types, _, err := cat.BuildWithReservations(cfg, prices, []string{"us-east-1a", "us-east-1b"},
		[]Reservation{{ID: "cr-1", InstanceType: "m5.large", Zone: "us-east-1b", Available: 1}})
	require.NoError(t, err)
	require.Len(t, types, 1)
	for _, o := range types[0].Offerings {
		assert.Equal(t, cfg.ZoneIDs[o.Zone], o.ZoneID, "%s offering in %s", o.CapacityType, o.Zone)
	}
	assert.Equal(t, []string{"use1-az1", "use1-az2"}, types[0].Requirements.Get(scheduling.LabelZoneID).Values())
	assert.Equal(t, []string{"us-east-1"}, types[0].Requirements.Get(scheduling.LabelRegion).Values())

	cfg.ZoneIDs = map[string]string{"us-east-1a": "use1-az1"}
	types, _, err = cat.Build(cfg, prices, nil)
	require.NoError(t, err)
	assert.False(t, types[0].Requirements.Has(scheduling.LabelZoneID), "us-east-1b's id is unknown")
}
