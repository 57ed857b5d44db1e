package pricing

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

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
	p, err := NewProvider("ap-east-2")
	require.NoError(t, err)
	assert.Equal(t, "static table for us-east-1 (fallback for ap-east-2) generated 2026-07-20T13:44:30Z", p.OnDemandSourceInfo())
	v, ok := p.OnDemand("m5.large")
	require.True(t, ok)
	assert.InDelta(t, 0.096, v, 1e-9)
	fresh := map[string]float64{}
	for _, name := range p.InstanceTypes() {
		fresh[name], _ = p.OnDemand(name)
	}
	fresh["m5.large"] = 0.12
	require.NoError(t, p.RefreshOnDemand(context.Background(), fakeSource{prices: fresh}, time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)))
	v, ok = p.OnDemand("m5.large")
	assert.True(t, ok)
	assert.InDelta(t, 0.12, v, 1e-9)
	assert.Equal(t, "AWS Pricing API for ap-east-2 observed 2026-11-22T12:00:00Z", p.OnDemandSourceInfo())
}

func TestCoveredRegionsStartFromTheirOwnPrices(t *testing.T) {
	for region, m5large := range map[string]float64{"us-east-1": 0.096, "us-east-2": 0.096, "us-west-2": 0.096, "eu-west-1": 0.107,
		"eu-central-1": 0.115, "ap-northeast-1": 0.124} {
		t.Run(region, func(t *testing.T) {
			p, err := NewProvider(region)
			require.NoError(t, err)
			info := p.OnDemandSourceInfo()
			assert.True(t, strings.HasPrefix(info, "static table for "+region+" generated "), info)
			assert.NotContains(t, info, "fallback")
			v, ok := p.OnDemand("m5.large")
			require.True(t, ok)
			assert.InDelta(t, m5large, v, 1e-9)
			assert.Greater(t, len(p.InstanceTypes()), 500)
			assert.Zero(t, p.OnDemandTable().ObservedAt, "shipped prices carry no observation time")
		})
	}
	ohio, err := NewProvider("us-east-2")
	require.NoError(t, err)
	assert.Contains(t, ohio.OnDemandSourceInfo(), "generated 2025-04-24T13:17:44Z", "each region carries its own source date")
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

func TestPriceByCapacityType(t *testing.T) {
	p, err := NewProvider("us-east-1")
	require.NoError(t, err)
	od, ok := p.OnDemand("m5.large")
	require.True(t, ok)
	got, ok := p.Price("m5.large", "us-east-1a", "on-demand")
	assert.True(t, ok)
	assert.Equal(t, od, got)
	spot, _ := p.Spot("m5.large", "us-east-1a")
	got, ok = p.Price("m5.large", "us-east-1a", "spot")
	assert.True(t, ok)
	assert.Equal(t, spot, got)
	got, ok = p.Price("m5.large", "us-east-1a", "reserved")
	assert.True(t, ok)
	assert.Zero(t, got, "a reservation is paid for whether it is used or not")
	_, ok = p.Price("m5.large", "us-east-1a", "dedicated")
	assert.False(t, ok, "an unknown capacity type has no price")
	_, ok = p.Price("no-such.type", "us-east-1a", "on-demand")
	assert.False(t, ok)
}
