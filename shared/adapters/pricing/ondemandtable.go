package pricing

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// OnDemandTable is a region's on-demand prices as read from Source at ObservedAt: instance type → hourly
// USD price. The lifecycle function stores the table the Pricing API answered so that the other functions
// load it instead of calling the API themselves.
type OnDemandTable struct {
	Region     string
	ObservedAt time.Time
	Source     string
	Prices     map[string]float64
}

// ErrImplausiblePrices is returned for an on-demand table that must not replace the prices held: a price
// that is not a positive finite number, or far fewer types than the region is known to offer — the mark
// of a partial answer.
var ErrImplausiblePrices = errors.New("implausible on-demand prices")

// MinOnDemandShare is the smallest share of the shipped table's types for the region a fresh table must
// price to be taken. Regions gain types over time and the shipped table may list a few retired ones, but a
// complete answer never has fewer than half; a page lost in the middle of a read, or a wrong filter, does.
const MinOnDemandShare = 0.5

// checkOnDemand refuses prices that are not a complete, sane table for a region whose shipped table lists
// known types.
func checkOnDemand(prices map[string]float64, known int) error {
	for name, v := range prices {
		if name == "" {
			return fmt.Errorf("an instance type name is empty: %w", ErrImplausiblePrices)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("%s is priced %v, not a positive hourly price: %w", name, v, ErrImplausiblePrices)
		}
	}
	if need := int(math.Ceil(float64(known) * MinOnDemandShare)); len(prices) < need {
		return fmt.Errorf("%d instance types priced, fewer than %d (half of the %d in the shipped table): %w",
			len(prices), need, known, ErrImplausiblePrices)
	}
	return nil
}

// OnDemandTable returns the on-demand prices the provider holds with their source; ObservedAt is the zero
// time while they are the shipped table's. The map is a copy.
func (p *Provider) OnDemandTable() OnDemandTable {
	p.mu.RLock()
	defer p.mu.RUnlock()
	t := OnDemandTable{Region: p.region, ObservedAt: p.onDemandUpdated, Source: p.onDemandSource, Prices: make(map[string]float64, len(p.onDemand))}
	for k, v := range p.onDemand {
		t.Prices[k] = v
	}
	return t
}

// LoadOnDemand replaces the provider's on-demand prices with t's when t is for the provider's region, is
// a complete and sane table (see MinOnDemandShare) and was observed after the prices held; it reports
// whether it did. A table for another region is ErrWrongRegion, an incomplete or insane one
// ErrImplausiblePrices; either leaves the prices held. An isolated provider (Isolate) keeps the shipped
// table and loads nothing.
func (p *Provider) LoadOnDemand(t OnDemandTable) (bool, error) {
	if t.Region != p.region {
		return false, fmt.Errorf("loading on-demand prices for %q into %s's provider: %w", t.Region, p.region, ErrWrongRegion)
	}
	if t.ObservedAt.IsZero() {
		return false, fmt.Errorf("loading on-demand prices for %s: observedAt is missing", t.Region)
	}
	if err := checkOnDemand(t.Prices, p.knownTypes); err != nil {
		return false, fmt.Errorf("loading on-demand prices for %s observed at %s: %w", t.Region, t.ObservedAt.UTC().Format(time.RFC3339), err)
	}
	prices := make(map[string]float64, len(t.Prices))
	for k, v := range t.Prices {
		prices[k] = v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isolated || !t.ObservedAt.After(p.onDemandUpdated) {
		return false, nil
	}
	p.onDemand = prices
	p.onDemandSource = onDemandLabel(t)
	p.onDemandUpdated = t.ObservedAt
	return true, nil
}

// onDemandLabel is what OnDemandSourceInfo says for a table that did not come from the shipped file.
func onDemandLabel(t OnDemandTable) string {
	src := t.Source
	if src == "" {
		src = "unnamed source"
	}
	return fmt.Sprintf("%s for %s observed %s", src, t.Region, t.ObservedAt.UTC().Format(time.RFC3339))
}
