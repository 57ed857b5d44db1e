package main

import (
	"context"
	"errors"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// storedPrices are the price tables the lifecycle function stores, loaded into the provisioner's
// provider: on-demand (from the Pricing API) and spot (from EC2), each read at most once a minute.
type storedPrices struct {
	onDemand *pricing.StoredOnDemand
	spot     *provisioning.StoredSpotPrices
}

func newStoredPrices(store *state.Store, prices *pricing.Provider, now func() time.Time) storedPrices {
	return storedPrices{
		onDemand: pricing.NewStoredOnDemand(store, prices, pricing.DefaultOnDemandEvery, now),
		spot:     provisioning.NewStoredSpotPrices(store, prices, provisioning.DefaultSpotPricesEvery, now),
	}
}

// loaders is what runs load before they price offerings: on-demand first, since a spot price is floored
// at a share of it.
func (s storedPrices) loaders() pricing.Loaders {
	return pricing.Loaders{s.onDemand, s.spot}
}

// warm loads both tables while the container starts. No on-demand table stored (or one that cannot be
// read) leaves the shipped table pricing; for spot, EC2 is read when none is stored (warmSpotPrices).
func (s storedPrices) warm(ctx context.Context, readEC2 func(context.Context) error) error {
	_, odErr := s.onDemand.Load(ctx)
	return errors.Join(odErr, warmSpotPrices(ctx, s.spot, readEC2))
}
