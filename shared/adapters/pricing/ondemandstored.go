package pricing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// DefaultOnDemandEvery is how often a warm container reads the stored on-demand table. The lifecycle
// rewrites it twice a day; reading it once a minute, as the spot table is, costs one small GetItem and
// brings a fresh table in within a minute of the refresh.
const DefaultOnDemandEvery = time.Minute

// OnDemandReader reads the on-demand table the lifecycle function stores; *state.Store satisfies it. It
// returns an error satisfying state.IsNotFound when nothing (or nothing current) is stored.
type OnDemandReader interface {
	OnDemandPrices(ctx context.Context) (state.OnDemandPrices, error)
}

var _ OnDemandReader = (*state.Store)(nil)

// StoredOnDemand loads the stored on-demand table into a Provider, reading it at most once per interval
// however many runs ask. Until a table is stored (or when it cannot be read or is refused) the provider
// keeps what it holds: the last table loaded, or the shipped one. It is safe for concurrent use.
type StoredOnDemand struct {
	reader OnDemandReader
	prices *Provider
	gate   *ReadGate
}

var _ Loader = (*StoredOnDemand)(nil)

// NewStoredOnDemand loads from r into prices at most once per every (DefaultOnDemandEvery when not
// positive), on the clock now.
func NewStoredOnDemand(r OnDemandReader, prices *Provider, every time.Duration, now func() time.Time) *StoredOnDemand {
	return &StoredOnDemand{reader: r, prices: prices, gate: NewReadGate(every, DefaultOnDemandEvery, now)}
}

// Load reads the stored table unless it was read less than the interval ago and loads it when it is
// newer than the prices held; it reports whether it did. Nothing stored is (false, nil). A failed read
// or a table the provider refuses is an error, not retried before the interval is over either.
func (s *StoredOnDemand) Load(ctx context.Context) (bool, error) {
	return s.gate.Do(func() (bool, error) { return s.load(ctx) })
}

func (s *StoredOnDemand) load(ctx context.Context) (bool, error) {
	if s.prices.Isolated() { // it keeps the shipped table: nothing to read
		return false, nil
	}
	op, err := s.reader.OnDemandPrices(ctx)
	if state.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("on-demand prices (pricing with %s): %w", s.prices.OnDemandSourceInfo(), err)
	}
	loaded, err := s.prices.LoadOnDemand(OnDemandTable(op))
	if err != nil {
		return false, fmt.Errorf("on-demand prices (pricing with %s): %w", s.prices.OnDemandSourceInfo(), err)
	}
	return loaded, nil
}

// Loader brings stored prices into a provider; Load reports whether the prices changed, and an error
// leaves them as they were.
type Loader interface {
	Load(ctx context.Context) (bool, error)
}

// Loaders runs loaders in order as one: on-demand before spot, since a spot price is floored at a share
// of on-demand. Every loader runs whatever the others return.
type Loaders []Loader

// Load runs every loader and reports whether any changed prices, with their errors joined.
func (ls Loaders) Load(ctx context.Context) (bool, error) {
	var any bool
	var errs []error
	for _, l := range ls {
		loaded, err := l.Load(ctx)
		any = any || loaded
		if err != nil {
			errs = append(errs, err)
		}
	}
	return any, errors.Join(errs...)
}
