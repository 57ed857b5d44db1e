package pricing

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// SpotTable is a region's spot prices as observed at one time: instance type → zone → hourly USD price.
// The lifecycle function exports the table RefreshSpot read so that other functions load it instead of
// reading EC2 themselves.
type SpotTable struct {
	Region     string
	ObservedAt time.Time
	Prices     map[string]map[string]float64
}

// ErrWrongRegion is returned when a spot table is for another region than the provider's.
var ErrWrongRegion = errors.New("spot table is for another region")

// SpotTable returns the spot prices the provider holds and when they were observed (the zero time when
// none were). The maps are a copy.
func (p *Provider) SpotTable() SpotTable {
	p.mu.RLock()
	defer p.mu.RUnlock()
	t := SpotTable{Region: p.region, ObservedAt: p.spotUpdated, Prices: map[string]map[string]float64{}}
	for k, v := range p.spot {
		zones := t.Prices[k.instanceType]
		if zones == nil {
			zones = map[string]float64{}
			t.Prices[k.instanceType] = zones
		}
		zones[k.zone] = v
	}
	return t
}

// LoadSpot replaces the provider's spot prices with t's when t is for the provider's region and was
// observed after the prices it holds; it reports whether it did. A table is one whole read of the region,
// so a type or zone missing from it goes back to the on-demand stand-in. Entries that are not positive
// finite prices are left out (that type and zone stays at on-demand); a table left with none is refused,
// as is one for another region (ErrWrongRegion).
func (p *Provider) LoadSpot(t SpotTable) (bool, error) {
	if t.Region != p.region {
		return false, fmt.Errorf("loading spot prices observed in %q into %s's provider: %w", t.Region, p.region, ErrWrongRegion)
	}
	spot := map[spotKey]float64{}
	for it, zones := range t.Prices {
		for zone, v := range zones {
			if it == "" || zone == "" || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				continue
			}
			spot[spotKey{it, zone}] = v
		}
	}
	if len(spot) == 0 {
		return false, fmt.Errorf("loading spot prices for %s observed at %s: no usable price in %d instance types", t.Region,
			t.ObservedAt.UTC().Format(time.RFC3339), len(t.Prices))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !t.ObservedAt.After(p.spotUpdated) {
		return false, nil
	}
	p.spot = spot
	p.spotUpdated = t.ObservedAt
	return true, nil
}

// SpotFloor is the lowest fraction of the on-demand price a spot price is taken at. AWS advertises spot
// discounts of up to 90%, so real prices stay above it, while odd data — a corrupt table, or the local
// emulator's $0.00001 for every type — would otherwise make every spot type equally free and lose the
// order by size that the scheduler picks by.
const SpotFloor = 0.05

// floorSpot raises a spot price below SpotFloor of on-demand to that floor.
func floorSpot(spot, onDemand float64) float64 {
	return math.Max(spot, onDemand*SpotFloor)
}
