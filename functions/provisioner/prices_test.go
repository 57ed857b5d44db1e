package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestWarmLoadsTheStoredOnDemandTableOrKeepsTheShippedOne(t *testing.T) {
	ctx := context.Background()
	db := state.NewClient(awstest.Shared(t).Config())
	_, err := db.CreateTable(ctx, state.CreateTableInput("state"))
	require.NoError(t, err)
	store := state.New(db, "state")
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	// Nothing stored: the shipped table prices, and spot is read from EC2.
	cold, err := pricing.NewProvider("ap-southeast-2")
	require.NoError(t, err)
	readEC2 := 0
	require.NoError(t, newStoredPrices(store, cold, clock).warm(ctx, func(context.Context) error { readEC2++; return nil }))
	assert.Equal(t, 1, readEC2)
	assert.Contains(t, cold.OnDemandSourceInfo(), "static table for ap-southeast-2 generated 2025-04-24T13:17:44Z",
		"a region outside the old four has its own shipped prices")

	// The lifecycle function stored a table: a new container prices from it.
	table, err := pricing.LoadStatic()
	require.NoError(t, err)
	fresh := map[string]float64{}
	for k, v := range table.Regions["ap-southeast-2"] {
		fresh[k] = v * 1.1
	}
	require.NoError(t, store.PutOnDemandPrices(ctx, state.OnDemandPrices{Region: "ap-southeast-2", ObservedAt: now.Add(-time.Hour), Source: "AWS Pricing API", Prices: fresh}))
	warm, err := pricing.NewProvider("ap-southeast-2")
	require.NoError(t, err)
	require.NoError(t, newStoredPrices(store, warm, clock).warm(ctx, func(context.Context) error { return nil }))
	assert.Equal(t, "AWS Pricing API for ap-southeast-2 observed 2026-11-22T11:00:00Z", warm.OnDemandSourceInfo())
	assert.Equal(t, fresh, warm.OnDemandTable().Prices)

	// A run's load takes a newer table a minute later, and never reads it more often.
	newer := map[string]float64{}
	for k, v := range fresh {
		newer[k] = v * 1.1
	}
	require.NoError(t, store.PutOnDemandPrices(ctx, state.OnDemandPrices{Region: "ap-southeast-2", ObservedAt: now, Source: "AWS Pricing API", Prices: newer}))
	stored := newStoredPrices(store, warm, func() time.Time { return now })
	loaded, err := stored.loaders().Load(ctx)
	require.NoError(t, err)
	assert.True(t, loaded)
	assert.Equal(t, "AWS Pricing API for ap-southeast-2 observed 2026-11-22T12:00:00Z", warm.OnDemandSourceInfo())
	loaded, err = stored.loaders().Load(ctx)
	require.NoError(t, err)
	assert.False(t, loaded, "read at most once a minute")
}
