package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// spotReader reads the region's spot prices from EC2 and hands out the table it read; *pricing.Provider
// satisfies it.
type spotReader interface {
	RefreshSpot(ctx context.Context, api pricing.SpotPriceAPI, now time.Time) error
	SpotTable() pricing.SpotTable
}

var _ spotReader = (*pricing.Provider)(nil)

// spotStore keeps the table for the other functions; *state.Store satisfies it.
type spotStore interface {
	PutSpotPrices(ctx context.Context, sp state.SpotPrices) error
}

var _ spotStore = (*state.Store)(nil)

// refreshSpot is the schedule's spot price refresh: read EC2, then store the table so the provisioner
// prices launches from it instead of reading EC2 itself. A failed read stores nothing; either failure is
// returned for the handler to log, and the next schedule tries again.
func refreshSpot(prices spotReader, api pricing.SpotPriceAPI, store spotStore, now func() time.Time) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := prices.RefreshSpot(ctx, api, now()); err != nil {
			return err
		}
		t := prices.SpotTable()
		if err := store.PutSpotPrices(ctx, state.SpotPrices{Region: t.Region, ObservedAt: t.ObservedAt, Prices: t.Prices}); err != nil {
			return fmt.Errorf("spot prices were read but not stored for the provisioner: %w", err)
		}
		return nil
	}
}
