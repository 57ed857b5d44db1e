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

func TestStoredPricesLoadOnDemandThenSpot(t *testing.T) {
	ctx := context.Background()
	db := state.NewClient(awstest.Shared(t).Config())
	_, err := db.CreateTable(ctx, state.CreateTableInput("state"))
	require.NoError(t, err)
	store := state.New(db, "state")
	prices, err := pricing.NewProvider("us-east-2")
	require.NoError(t, err)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	loaded, err := storedPrices(store, prices, clock).Load(ctx)
	require.NoError(t, err, "nothing stored yet is not an error")
	assert.False(t, loaded)
	assert.Contains(t, prices.OnDemandSourceInfo(), "static table for us-east-2", "the shipped table until one is stored")

	table, err := pricing.LoadStatic()
	require.NoError(t, err)
	onDemand := map[string]float64{}
	for k, v := range table.Regions["us-east-2"] {
		onDemand[k] = v * 2
	}
	require.NoError(t, store.PutOnDemandPrices(ctx, state.OnDemandPrices{Region: "us-east-2", ObservedAt: now.Add(-time.Hour), Source: "AWS Pricing API", Prices: onDemand}))
	require.NoError(t, store.PutSpotPrices(ctx, state.SpotPrices{Region: "us-east-2", ObservedAt: now.Add(-time.Minute),
		Prices: map[string]map[string]float64{"m5.large": {"us-east-2a": 0.001}}}))

	loaded, err = storedPrices(store, prices, clock).Load(ctx)
	require.NoError(t, err)
	assert.True(t, loaded)
	assert.Equal(t, "AWS Pricing API for us-east-2 observed 2026-11-22T11:00:00Z", prices.OnDemandSourceInfo(),
		"consolidation prices from the stored on-demand table")
	od, _ := prices.OnDemand("m5.large")
	assert.InDelta(t, 0.192, od, 1e-9)
	spot, _ := prices.Spot("m5.large", "us-east-2a")
	assert.InDelta(t, 0.192*pricing.SpotFloor, spot, 1e-9, "spot floored at a share of the loaded on-demand price")
}
