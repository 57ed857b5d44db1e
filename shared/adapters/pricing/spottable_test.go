package pricing

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

var observed = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestLoadSpotPricesKnownOffersAndLeavesTheRestAtOnDemand(t *testing.T) {
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	loaded, err := p.LoadSpot(SpotTable{Region: "us-east-1", ObservedAt: observed, Prices: map[string]map[string]float64{
		"m5.large": {"us-east-1a": 0.0391, "us-east-1b": 0.0412},
	}})
	require.NoError(t, err)
	assert.True(t, loaded)

	v, ok := p.Spot("m5.large", "us-east-1a")
	require.True(t, ok)
	assert.InDelta(t, 0.0391, v, 1e-12)
	v, _ = p.Spot("m5.large", "us-east-1b")
	assert.InDelta(t, 0.0412, v, 1e-12)
	od, _ := p.OnDemand("m5.large")
	v, _ = p.Spot("m5.large", "us-east-1c")
	assert.InDelta(t, od, v, 1e-12, "a zone the table does not price stays at on-demand")
	od, _ = p.OnDemand("c5.large")
	v, _ = p.Spot("c5.large", "us-east-1a")
	assert.InDelta(t, od, v, 1e-12, "a type the table does not price stays at on-demand")
	_, ok = p.Spot("no-such.type", "us-east-1a")
	assert.False(t, ok, "a type with no price at all has no spot price either")

	table := p.SpotTable()
	assert.Equal(t, "us-east-1", table.Region)
	assert.True(t, table.ObservedAt.Equal(observed))
	assert.Equal(t, map[string]map[string]float64{"m5.large": {"us-east-1a": 0.0391, "us-east-1b": 0.0412}}, table.Prices)
}

func TestLoadSpotOnlyMovesForward(t *testing.T) {
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	table := func(at time.Time, price float64) SpotTable {
		return SpotTable{Region: "us-east-1", ObservedAt: at, Prices: map[string]map[string]float64{"m5.large": {"us-east-1a": price}}}
	}
	loaded, err := p.LoadSpot(table(observed, 0.04))
	require.NoError(t, err)
	require.True(t, loaded)
	for name, at := range map[string]time.Time{"older": observed.Add(-time.Minute), "same time": observed} {
		loaded, err = p.LoadSpot(table(at, 0.09))
		require.NoError(t, err, name)
		assert.False(t, loaded, name)
	}
	v, _ := p.Spot("m5.large", "us-east-1a")
	assert.InDelta(t, 0.04, v, 1e-12, "an observation no newer than the held one changes nothing")

	loaded, err = p.LoadSpot(SpotTable{Region: "us-east-1", ObservedAt: observed.Add(time.Minute),
		Prices: map[string]map[string]float64{"c5.large": {"us-east-1a": 0.035}}})
	require.NoError(t, err)
	assert.True(t, loaded)
	od, _ := p.OnDemand("m5.large")
	v, _ = p.Spot("m5.large", "us-east-1a")
	assert.InDelta(t, od, v, 1e-12, "a newer table replaces the whole set: m5.large is no longer priced")
}

func TestLoadSpotRefusesOtherRegionsAndEmptyTables(t *testing.T) {
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	_, err = p.LoadSpot(SpotTable{Region: "eu-west-1", ObservedAt: observed, Prices: map[string]map[string]float64{"m5.large": {"eu-west-1a": 0.04}}})
	require.ErrorIs(t, err, ErrWrongRegion)
	assert.ErrorContains(t, err, `observed in "eu-west-1" into us-east-1's provider`)

	_, err = p.LoadSpot(SpotTable{Region: "us-east-1", ObservedAt: observed, Prices: map[string]map[string]float64{
		"m5.large": {"us-east-1a": 0, "us-east-1b": -1, "us-east-1c": math.NaN(), "": math.Inf(1)}}})
	require.ErrorContains(t, err, "no usable price in 1 instance types")
	assert.True(t, p.SpotTable().ObservedAt.IsZero(), "a refused table leaves nothing behind")
}

func TestOddSpotPricesAreDroppedOrFloored(t *testing.T) {
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	od, _ := p.OnDemand("m5.large")
	loaded, err := p.LoadSpot(SpotTable{Region: "us-east-1", ObservedAt: observed, Prices: map[string]map[string]float64{
		"m5.large":  {"us-east-1a": 0.00001, "us-east-1b": -0.02, "us-east-1c": math.NaN(), "us-east-1d": od * 1.2},
		"c5.large":  {"us-east-1a": 0.034},
		"new.metal": {"us-east-1a": 0.5}, // spot seen, no on-demand price known: no floor to apply
	}})
	require.NoError(t, err)
	require.True(t, loaded)
	for _, tc := range []struct {
		name, zone string
		want       float64
	}{
		{"far below any real discount: floored", "us-east-1a", od * SpotFloor},
		{"negative: dropped, so on-demand", "us-east-1b", od},
		{"not a number: dropped, so on-demand", "us-east-1c", od},
		{"above on-demand: taken as seen", "us-east-1d", od * 1.2},
	} {
		v, ok := p.Spot("m5.large", tc.zone)
		require.True(t, ok, tc.name)
		assert.InDelta(t, tc.want, v, 1e-12, tc.name)
	}
	v, _ := p.Spot("c5.large", "us-east-1a")
	assert.InDelta(t, 0.034, v, 1e-12, "a real price is untouched")
	v, ok := p.Spot("new.metal", "us-east-1a")
	assert.True(t, ok)
	assert.InDelta(t, 0.5, v, 1e-12)
	assert.NotContains(t, p.SpotTable().Prices["m5.large"], "us-east-1b", "dropped entries are not exported either")
}

func TestRefreshedTableLoadsIntoAnotherProvider(t *testing.T) {
	moto := awstest.Shared(t)
	reader, err := NewProvider("us-east-1")
	require.NoError(t, err)
	at := time.Now()
	require.NoError(t, reader.RefreshSpot(context.Background(), ec2.NewFromConfig(moto.Config()), at))
	table := reader.SpotTable()
	assert.True(t, table.ObservedAt.Equal(at))
	assert.Greater(t, len(table.Prices), 500, "moto prices every offered type")
	assert.Len(t, table.Prices["m5.large"], 5, "in each zone moto offers it in")

	loader, err := NewProvider("us-east-1")
	require.NoError(t, err)
	loaded, err := loader.LoadSpot(table)
	require.NoError(t, err)
	require.True(t, loaded)
	for _, it := range []string{"m5.large", "c6g.xlarge", "r5.24xlarge"} {
		want, ok := reader.Spot(it, "us-east-1a")
		require.True(t, ok, it)
		got, ok := loader.Spot(it, "us-east-1a")
		require.True(t, ok, it)
		assert.InDelta(t, want, got, 1e-12, it)
		od, _ := loader.OnDemand(it)
		assert.InDelta(t, od*SpotFloor, got, 1e-12, "moto's $0.00001 is floored at %v of on-demand for %s", SpotFloor, it)
	}
}
