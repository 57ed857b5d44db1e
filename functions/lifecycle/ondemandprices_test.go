package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// apiAnswer is an OnDemandSource with a fixed answer, standing in for the Pricing API (whose client is
// tested against recorded pages in shared/adapters/pricing).
type apiAnswer struct {
	prices map[string]float64
	err    error
	calls  int
}

func (a *apiAnswer) OnDemandPrices(context.Context, string) (map[string]float64, error) {
	a.calls++
	return a.prices, a.err
}

// shipped returns the shipped prices for region times factor: a complete answer unlike the shipped one.
func shipped(t *testing.T, region string, factor float64) map[string]float64 {
	t.Helper()
	table, err := pricing.LoadStatic()
	require.NoError(t, err)
	out := map[string]float64{}
	for k, v := range table.Regions[region] {
		out[k] = v * factor
	}
	return out
}

func TestOnDemandRefreshStoresTheTableTheProvisionerLoads(t *testing.T) {
	ctx := context.Background()
	store := stateStore(t, awstest.Shared(t))
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lifecyclePrices, err := pricing.NewProvider("eu-west-1")
	require.NoError(t, err)
	api := &apiAnswer{prices: shipped(t, "eu-west-1", 1.04)}
	res, err := pricing.NewOnDemandRefresher(lifecyclePrices, api, store, func() time.Time { return at }).Refresh(ctx)
	require.NoError(t, err)
	require.True(t, res.Refreshed)

	// The provisioner's and the disruption function's wiring: stored on-demand, then stored spot.
	provisionerPrices, err := pricing.NewProvider("eu-west-1")
	require.NoError(t, err)
	loaded, err := pricing.Loaders{pricing.NewStoredOnDemand(store, provisionerPrices, pricing.DefaultOnDemandEvery, time.Now)}.Load(ctx)
	require.NoError(t, err)
	assert.True(t, loaded)
	assert.Equal(t, "AWS Pricing API for eu-west-1 observed 2026-11-22T12:00:00Z", provisionerPrices.OnDemandSourceInfo())
	want, _ := lifecyclePrices.OnDemand("m5.large")
	got, _ := provisionerPrices.OnDemand("m5.large")
	assert.InDelta(t, 0.107*1.04, got, 1e-9)
	assert.Equal(t, want, got, "the provisioner prices on-demand as the lifecycle function read it")
}

func TestFailedOnDemandReadStoresNothingAndLeavesTheShippedTable(t *testing.T) {
	ctx := context.Background()
	store := stateStore(t, awstest.Shared(t))
	prices, err := pricing.NewProvider("eu-west-1")
	require.NoError(t, err)
	api := &apiAnswer{err: errors.New("AccessDeniedException: not authorized to perform pricing:GetProducts")}
	res, err := pricing.NewOnDemandRefresher(prices, api, store, time.Now).Refresh(ctx)
	require.ErrorContains(t, err, "pricing:GetProducts")
	assert.Contains(t, res.Source, "static table for eu-west-1")
	_, err = store.OnDemandPrices(ctx)
	assert.True(t, state.IsNotFound(err), "nothing stored after a failed read: %v", err)

	provisionerPrices, err := pricing.NewProvider("eu-west-1")
	require.NoError(t, err)
	loaded, err := pricing.NewStoredOnDemand(store, provisionerPrices, 0, time.Now).Load(ctx)
	require.NoError(t, err)
	assert.False(t, loaded)
	assert.Contains(t, provisionerPrices.OnDemandSourceInfo(), "static table for eu-west-1", "the shipped table is the fallback")
}
