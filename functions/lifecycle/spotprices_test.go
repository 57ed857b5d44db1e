package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// stateStore creates a state table in the shared moto and returns a store over it.
func stateStore(t *testing.T, moto *awstest.Moto) *state.Store {
	t.Helper()
	db := state.NewClient(moto.Config())
	_, err := db.CreateTable(context.Background(), state.CreateTableInput("state"))
	require.NoError(t, err)
	return state.New(db, "state")
}

func TestSpotRefreshStoresTheTableForTheProvisioner(t *testing.T) {
	ctx := context.Background()
	moto := awstest.Shared(t)
	store := stateStore(t, moto)
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

	require.NoError(t, refreshSpot(prices, ec2.NewFromConfig(moto.Config()), store, func() time.Time { return at })(ctx))

	stored, err := store.SpotPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, "us-east-1", stored.Region)
	assert.True(t, stored.ObservedAt.Equal(at), "stored as observed at %s", stored.ObservedAt)
	assert.Equal(t, prices.SpotTable().Prices, stored.Prices, "the whole table EC2 returned")

	provisioner, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	loaded, err := provisioner.LoadSpot(pricing.SpotTable{Region: stored.Region, ObservedAt: stored.ObservedAt, Prices: stored.Prices})
	require.NoError(t, err)
	assert.True(t, loaded)
	want, _ := prices.Spot("m5.large", "us-east-1a")
	got, _ := provisioner.Spot("m5.large", "us-east-1a")
	assert.InDelta(t, want, got, 1e-12, "the provisioner prices spot as the lifecycle function read it")
}

// failingSpotAPI fails every spot price history read.
type failingSpotAPI struct{}

func (failingSpotAPI) DescribeSpotPriceHistory(context.Context, *ec2.DescribeSpotPriceHistoryInput, ...func(*ec2.Options)) (*ec2.DescribeSpotPriceHistoryOutput, error) {
	return nil, errors.New("RequestLimitExceeded")
}

func TestFailedSpotReadStoresNothing(t *testing.T) {
	ctx := context.Background()
	store := stateStore(t, awstest.Shared(t))
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)

	err = refreshSpot(prices, failingSpotAPI{}, store, time.Now)(ctx)
	require.ErrorContains(t, err, "RequestLimitExceeded")
	_, err = store.SpotPrices(ctx)
	assert.True(t, state.IsNotFound(err), "nothing stored after a failed read: %v", err)
}

func TestFailedStoreIsReturnedForTheLog(t *testing.T) {
	moto := awstest.Shared(t)
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	missing := state.New(state.NewClient(moto.Config()), "no-such-table")

	err = refreshSpot(prices, ec2.NewFromConfig(moto.Config()), missing, time.Now)(context.Background())
	require.ErrorContains(t, err, "spot prices were read but not stored for the provisioner")
	assert.NotEmpty(t, prices.SpotTable().Prices, "the read itself succeeded")
}
