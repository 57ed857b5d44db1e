package main

import (
	"time"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// storedPrices loads the tables the lifecycle function stores into prices before a run prices
// offerings, each at most once a minute: on-demand first (a spot price is floored at a share of it), then
// spot. A consolidation decision compares the prices of what runs with what would replace it, so it must
// price both from the same source the provisioner launches with.
func storedPrices(store *state.Store, prices *pricing.Provider, now func() time.Time) pricing.Loaders {
	return pricing.Loaders{
		pricing.NewStoredOnDemand(store, prices, pricing.DefaultOnDemandEvery, now),
		provisioning.NewStoredSpotPrices(store, prices, provisioning.DefaultSpotPricesEvery, now),
	}
}
