package provisioning

import (
	"context"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// DefaultSpotPricesEvery is how often a warm container reads the stored spot price table: the lifecycle
// function rewrites it about once a minute, so reading it more often would only find the same table.
const DefaultSpotPricesEvery = time.Minute

// SpotPriceReader reads the spot price table the lifecycle function stores; *state.Store satisfies it.
// It returns an error satisfying state.IsNotFound when nothing (or nothing current) is stored.
type SpotPriceReader interface {
	SpotPrices(ctx context.Context) (state.SpotPrices, error)
}

var _ SpotPriceReader = (*state.Store)(nil)

// SpotPriceTable takes a stored table when it is newer than the prices held; *pricing.Provider satisfies
// it.
type SpotPriceTable interface {
	LoadSpot(t pricing.SpotTable) (bool, error)
}

var _ SpotPriceTable = (*pricing.Provider)(nil)

// SpotPriceSource brings stored spot prices into Dependencies.Prices before a run prices offerings;
// *StoredSpotPrices satisfies it. Load reports whether the prices changed; an error leaves them as they
// were.
type SpotPriceSource interface {
	Load(ctx context.Context) (bool, error)
}

var _ SpotPriceSource = (*StoredSpotPrices)(nil)

// StoredSpotPrices loads the stored spot price table into a price table, reading it at most once per
// interval however many runs ask: prices are refreshed on a schedule, never per launch. It is safe for
// concurrent use.
type StoredSpotPrices struct {
	reader SpotPriceReader
	prices SpotPriceTable
	gate   *pricing.ReadGate
}

// NewStoredSpotPrices loads from r into prices at most once per every (DefaultSpotPricesEvery when not
// positive), on the clock now.
func NewStoredSpotPrices(r SpotPriceReader, prices SpotPriceTable, every time.Duration, now func() time.Time) *StoredSpotPrices {
	return &StoredSpotPrices{reader: r, prices: prices, gate: pricing.NewReadGate(every, DefaultSpotPricesEvery, now)}
}

// Load reads the stored table unless it was read less than the interval ago, and loads it when it is
// newer than the prices held; it reports whether it did. Nothing stored is (false, nil): spot stays at
// what is held, or at on-demand. A failed read or a table the prices refuse is an error, and is not
// retried before the interval is over either.
func (s *StoredSpotPrices) Load(ctx context.Context) (bool, error) {
	return s.gate.Do(func() (bool, error) { return s.load(ctx) })
}

func (s *StoredSpotPrices) load(ctx context.Context) (bool, error) {
	sp, err := s.reader.SpotPrices(ctx)
	if state.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	loaded, err := s.prices.LoadSpot(pricing.SpotTable{Region: sp.Region, ObservedAt: sp.ObservedAt, Prices: sp.Prices})
	if err != nil {
		return false, fmt.Errorf("loading the stored spot prices: %w", err)
	}
	return loaded, nil
}

// loadSpotPrices brings stored spot prices in before a run prices offerings. A failure is a problem for
// the report, not a reason to stop: the prices held (spot at on-demand until known) still price safely.
func (p *Provisioner) loadSpotPrices(ctx context.Context, rep *Report) {
	if p.deps.SpotPrices == nil {
		return
	}
	if _, err := p.deps.SpotPrices.Load(ctx); err != nil {
		rep.Errors = append(rep.Errors, fmt.Sprintf("spot prices: %v (pricing with the ones held)", err))
	}
}
