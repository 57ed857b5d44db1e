package pricing

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

func TestStaticTableCoversUSEast1WithKnownPrices(t *testing.T) {
	table, err := LoadStatic()
	require.NoError(t, err)
	assert.NotEmpty(t, table.Source)
	assert.Equal(t, "2026-07-20T13:44:30Z", table.GeneratedAt)
	assert.Contains(t, table.StaticRegions(), "us-east-1")
	us := table.Regions["us-east-1"]
	assert.Greater(t, len(us), 1000)
	assert.InDelta(t, 0.096, us["m5.large"], 1e-9)
	assert.InDelta(t, 0.0816, us["m7g.large"], 1e-9)
	for name, price := range us {
		assert.Positive(t, price, name)
	}
}

func TestSpotStartsAtOnDemand(t *testing.T) {
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	od, ok := p.OnDemand("m5.large")
	require.True(t, ok)
	spot, ok := p.Spot("m5.large", "us-east-1a")
	require.True(t, ok)
	assert.Equal(t, od, spot, "an unknown spot price is the on-demand price, never a guess below it")
	_, ok = p.OnDemand("no-such.type")
	assert.False(t, ok)
}

func TestUncoveredRegionFallsBackUntilRefreshed(t *testing.T) {
	p, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	assert.Contains(t, p.OnDemandSourceInfo(), "us-east-1 (fallback for eu-west-1)")
	v, ok := p.OnDemand("m5.large")
	require.True(t, ok)
	assert.InDelta(t, 0.096, v, 1e-9)
	require.NoError(t, p.RefreshOnDemand(context.Background(), fakeSource{prices: map[string]float64{"m5.large": 0.107}}, time.Now()))
	v, ok = p.OnDemand("m5.large")
	assert.True(t, ok)
	assert.InDelta(t, 0.107, v, 1e-9)
	assert.Contains(t, p.OnDemandSourceInfo(), "pricing API")
}

type fakeSource struct {
	prices map[string]float64
	err    error
}

func (f fakeSource) OnDemandPrices(context.Context, string) (map[string]float64, error) {
	return f.prices, f.err
}

func TestFailedRefreshKeepsPrices(t *testing.T) {
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	err = p.RefreshOnDemand(context.Background(), fakeSource{err: errors.New("endpoint unreachable")}, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "keeping static table for us-east-1")
	v, ok := p.OnDemand("m5.large")
	assert.True(t, ok)
	assert.InDelta(t, 0.096, v, 1e-9)
	assert.ErrorIs(t, p.RefreshOnDemand(context.Background(), fakeSource{prices: map[string]float64{}}, time.Now()), ErrNoPrices)
}

func TestRefreshSpotFromMoto(t *testing.T) {
	moto := awstest.Shared(t)
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	require.NoError(t, p.RefreshSpot(context.Background(), ec2.NewFromConfig(moto.Config()), time.Now()))
	p.mu.RLock()
	n := len(p.spot)
	p.mu.RUnlock()
	assert.Positive(t, n, "moto publishes spot prices")
	od, _ := p.OnDemand("m5.large")
	spot, ok := p.Spot("m5.large", "us-east-1a")
	require.True(t, ok)
	assert.NotEqual(t, od, spot, "a known spot price replaces the on-demand stand-in")
}
