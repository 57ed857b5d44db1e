package state

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOnDemandPricesRoundTripAtRegionSize(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	_, err := s.OnDemandPrices(ctx)
	require.ErrorIs(t, err, ErrNotFound, "nothing stored yet")

	prices := map[string]float64{}
	for i := range 1400 {
		prices[fmt.Sprintf("t%d.%dxlarge", i%97, i)] = math.Round((0.003+float64(i)*0.0371)*1e4) / 1e4
	}
	want := OnDemandPrices{Region: "eu-west-1", ObservedAt: clk.Now().Add(-time.Second), Source: "pricing API", Prices: prices}
	require.NoError(t, s.PutOnDemandPrices(ctx, want))
	got, err := s.OnDemandPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, "eu-west-1", got.Region)
	assert.Equal(t, "pricing API", got.Source)
	assert.True(t, got.ObservedAt.Equal(want.ObservedAt), "observedAt %s, want %s", got.ObservedAt, want.ObservedAt)
	assert.Equal(t, want.Prices, got.Prices, "every price comes back exactly")

	raw, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(pricesPartition, onDemandPricesSort)})
	require.NoError(t, err)
	t.Logf("1400 types: item of %d bytes", ItemSize(raw.Item))
	assert.Less(t, ItemSize(raw.Item), 64*1024)
	ttl, err := numberAttr(raw.Item, TTLAttribute)
	require.NoError(t, err)
	assert.Equal(t, clk.Now().Add(OnDemandPricesTTL).Unix(), ttl)
	spot, err := s.SpotPrices(ctx)
	assert.ErrorIs(t, err, ErrNotFound, "the on-demand table is its own item, not the spot table: %+v", spot)
}

func TestOnDemandPricesNewerObservationWinsAndExpires(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	table := func(at time.Time, price float64) OnDemandPrices {
		return OnDemandPrices{Region: "us-east-1", ObservedAt: at, Source: "pricing API", Prices: map[string]float64{"m5.large": price}}
	}
	t0 := clk.Now()
	require.NoError(t, s.PutOnDemandPrices(ctx, table(t0, 0.096)))
	require.NoError(t, s.PutOnDemandPrices(ctx, table(t0.Add(-time.Hour), 0.5)), "an older observation is not an error")
	got, err := s.OnDemandPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0.096, got.Prices["m5.large"], "the older observation did not overwrite the newer")

	require.NoError(t, s.PutOnDemandPrices(ctx, table(t0.Add(12*time.Hour), 0.1)))
	got, err = s.OnDemandPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0.1, got.Prices["m5.large"])

	clk.Advance(OnDemandPricesTTL)
	_, err = s.OnDemandPrices(ctx)
	require.ErrorIs(t, err, ErrNotFound, "an expired table reads as absent")
	require.NoError(t, s.PutOnDemandPrices(ctx, table(t0, 0.2)))
	got, err = s.OnDemandPrices(ctx)
	require.NoError(t, err, "an expired table is replaced whatever its time")
	assert.Equal(t, 0.2, got.Prices["m5.large"])
}

func TestPutOnDemandPricesRejectsBadInput(t *testing.T) {
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ok := map[string]float64{"m5.large": 0.096}
	for name, tc := range map[string]struct {
		in   OnDemandPrices
		want string
	}{
		"no region":     {OnDemandPrices{ObservedAt: at, Source: "api", Prices: ok}, "region is required"},
		"no time":       {OnDemandPrices{Region: "us-east-1", Source: "api", Prices: ok}, "observedAt is required"},
		"no source":     {OnDemandPrices{Region: "us-east-1", ObservedAt: at, Prices: ok}, "source is required"},
		"empty table":   {OnDemandPrices{Region: "us-east-1", ObservedAt: at, Source: "api"}, "prices is empty"},
		"empty type":    {OnDemandPrices{Region: "us-east-1", ObservedAt: at, Source: "api", Prices: map[string]float64{"": 1}}, "instance type name is empty"},
		"zero price":    {OnDemandPrices{Region: "us-east-1", ObservedAt: at, Source: "api", Prices: map[string]float64{"m5.large": 0}}, "prices[m5.large] is 0, not a positive hourly price"},
		"negative":      {OnDemandPrices{Region: "us-east-1", ObservedAt: at, Source: "api", Prices: map[string]float64{"m5.large": -1}}, "is -1"},
		"not a number":  {OnDemandPrices{Region: "us-east-1", ObservedAt: at, Source: "api", Prices: map[string]float64{"m5.large": math.NaN()}}, "is NaN"},
		"infinite cost": {OnDemandPrices{Region: "us-east-1", ObservedAt: at, Source: "api", Prices: map[string]float64{"m5.large": math.Inf(1)}}, "is +Inf"},
	} {
		t.Run(name, func(t *testing.T) {
			err := New(nil, "state").PutOnDemandPrices(context.Background(), tc.in)
			require.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestOnDemandPricesCorruptItemIsAnError(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	item := map[string]types.AttributeValue{
		PartitionKey: str(pricesPartition), SortKey: str(onDemandPricesSort), attrRegion: str("us-east-1"),
		attrObservedAt: num(clk.Now().UnixMilli()), attrEncoding: str(spotPriceEncoding),
		attrPrices: &types.AttributeValueMemberB{Value: []byte("not gzip")}, TTLAttribute: num(clk.Now().Add(time.Hour).Unix()),
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	require.NoError(t, err)
	_, err = s.OnDemandPrices(ctx)
	require.ErrorContains(t, err, "decoding stored on-demand prices: attribute source missing")

	item[attrSource] = str("pricing API")
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	require.NoError(t, err)
	_, err = s.OnDemandPrices(ctx)
	require.ErrorContains(t, err, "decoding stored on-demand prices: prices: not gzip")
	assert.False(t, IsNotFound(err), "a corrupt table is an error, not an absent one")
}
