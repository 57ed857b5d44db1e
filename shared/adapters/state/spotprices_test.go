package state

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regionSpotPrices is a table the size of us-east-1's: types instance types in six zones, priced with
// the six decimals EC2 reports and no two alike, so compression gets no help from repeats.
func regionSpotPrices(types int, at time.Time) SpotPrices {
	r := rand.New(rand.NewPCG(1, 2))
	families := []string{"m5", "m6i", "m7g", "c5", "c6g", "c7i", "r5", "r6a", "t3", "t4g", "g5", "p4d", "x2iedn", "i4i", "inf2"}
	sizes := []string{"nano", "micro", "small", "medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal"}
	prices := map[string]map[string]float64{}
	for i := 0; len(prices) < types; i++ {
		name := fmt.Sprintf("%s%s.%s", families[i%len(families)], []string{"", "d", "n", "dn", "a", "e"}[i/len(families)%6], sizes[i/(len(families)*6)%len(sizes)])
		if i >= len(families)*6*len(sizes) {
			name = fmt.Sprintf("%s-%d", name, i)
		}
		zones := map[string]float64{}
		for _, z := range []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1e", "us-east-1f"} {
			zones[z] = math.Round((0.001+r.Float64()*30)*1e6) / 1e6
		}
		prices[name] = zones
	}
	return SpotPrices{Region: "us-east-1", ObservedAt: at, Prices: prices}
}

func TestSpotPricesRoundTripAtRegionSize(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	_, err := s.SpotPrices(ctx)
	require.ErrorIs(t, err, ErrNotFound, "nothing stored yet")

	want := regionSpotPrices(1263, clk.Now().Add(-time.Second))
	require.NoError(t, s.PutSpotPrices(ctx, want))
	got, err := s.SpotPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, "us-east-1", got.Region)
	assert.True(t, got.ObservedAt.Equal(want.ObservedAt), "observedAt %s, want %s", got.ObservedAt, want.ObservedAt)
	assert.Equal(t, want.Prices, got.Prices, "every price comes back exactly")

	raw, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(pricesPartition, spotPricesSort)})
	require.NoError(t, err)
	size := ItemSize(raw.Item)
	t.Logf("1263 types × 6 zones: item of %d bytes", size)
	assert.Less(t, size, 100*1024, "one item, well under DynamoDB's 400 KB")
	ttl, err := numberAttr(raw.Item, TTLAttribute)
	require.NoError(t, err)
	assert.Equal(t, clk.Now().Add(SpotPricesTTL).Unix(), ttl)
}

func TestSpotPricesNewerObservationWins(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	table := func(at time.Time, price float64) SpotPrices {
		return SpotPrices{Region: "us-east-1", ObservedAt: at, Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": price}}}
	}
	t0 := clk.Now()
	require.NoError(t, s.PutSpotPrices(ctx, table(t0, 0.04)))
	require.NoError(t, s.PutSpotPrices(ctx, table(t0.Add(-time.Minute), 0.09)), "an older observation is not an error")
	got, err := s.SpotPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0.04, got.Prices["m5.large"]["us-east-1a"], "the older observation did not overwrite the newer")

	require.NoError(t, s.PutSpotPrices(ctx, table(t0.Add(time.Minute), 0.05)))
	got, err = s.SpotPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0.05, got.Prices["m5.large"]["us-east-1a"])
	assert.True(t, got.ObservedAt.Equal(t0.Add(time.Minute)))

	errs := race(4, func(i int) error {
		return s.PutSpotPrices(ctx, table(t0.Add(time.Duration(2+i)*time.Minute), float64(i+1)/1000))
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	got, err = s.SpotPrices(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0.004, got.Prices["m5.large"]["us-east-1a"], "racing writers leave the newest observation")
	assert.True(t, got.ObservedAt.Equal(t0.Add(5*time.Minute)))
}

func TestSpotPricesExpire(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	at := clk.Now()
	require.NoError(t, s.PutSpotPrices(ctx, SpotPrices{Region: "us-east-1", ObservedAt: at,
		Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": 0.04}}}))
	clk.Advance(SpotPricesTTL)
	_, err := s.SpotPrices(ctx)
	require.ErrorIs(t, err, ErrNotFound, "an expired table reads as absent before DynamoDB deletes it")

	require.NoError(t, s.PutSpotPrices(ctx, SpotPrices{Region: "us-east-1", ObservedAt: at.Add(-time.Hour),
		Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": 0.03}}}))
	got, err := s.SpotPrices(ctx)
	require.NoError(t, err, "an expired table is replaced whatever its time")
	assert.Equal(t, 0.03, got.Prices["m5.large"]["us-east-1a"])
}

func TestPutSpotPricesRejectsBadInput(t *testing.T) {
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	ok := map[string]map[string]float64{"m5.large": {"us-east-1a": 0.04}}
	for name, tc := range map[string]struct {
		in   SpotPrices
		want string
	}{
		"no region":     {SpotPrices{ObservedAt: at, Prices: ok}, "region is required"},
		"no time":       {SpotPrices{Region: "us-east-1", Prices: ok}, "observedAt is required"},
		"empty table":   {SpotPrices{Region: "us-east-1", ObservedAt: at}, "prices is empty"},
		"empty type":    {SpotPrices{Region: "us-east-1", ObservedAt: at, Prices: map[string]map[string]float64{"": {"us-east-1a": 1}}}, "instance type name is empty"},
		"empty zone":    {SpotPrices{Region: "us-east-1", ObservedAt: at, Prices: map[string]map[string]float64{"m5.large": {"": 1}}}, "prices[m5.large] has an empty zone name"},
		"zero price":    {SpotPrices{Region: "us-east-1", ObservedAt: at, Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": 0}}}, "prices[m5.large][us-east-1a] is 0, not a positive hourly price"},
		"not a number":  {SpotPrices{Region: "us-east-1", ObservedAt: at, Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": math.NaN()}}}, "is NaN"},
		"infinite cost": {SpotPrices{Region: "us-east-1", ObservedAt: at, Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": math.Inf(1)}}}, "is +Inf"},
	} {
		t.Run(name, func(t *testing.T) {
			// No table is needed: bad input is refused before any request.
			err := New(nil, "state").PutSpotPrices(context.Background(), tc.in)
			require.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestSpotPricesCorruptItemIsAnError(t *testing.T) {
	ctx := context.Background()
	s, clk := newStore(t)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: map[string]types.AttributeValue{
		PartitionKey: str(pricesPartition), SortKey: str(spotPricesSort), attrRegion: str("us-east-1"),
		attrObservedAt: num(clk.Now().UnixMilli()), attrEncoding: str(spotPriceEncoding),
		attrPrices: &types.AttributeValueMemberB{Value: []byte("not gzip")}, TTLAttribute: num(clk.Now().Add(time.Hour).Unix()),
	}})
	require.NoError(t, err)
	_, err = s.SpotPrices(ctx)
	require.ErrorContains(t, err, "decoding stored spot prices: prices: not gzip")
	assert.False(t, IsNotFound(err), "a corrupt table is an error, not an absent one")
}
