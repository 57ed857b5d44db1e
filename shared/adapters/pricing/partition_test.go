package pricing

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestPartitionCurrencyAndPricingAPI(t *testing.T) {
	cases := []struct {
		region, partition, currency, endpoint string
		api                                   bool
	}{
		{"us-east-1", PartitionAWS, "USD", "us-east-1", true},
		{"eu-west-3", PartitionAWS, "USD", "eu-central-1", true},
		{"ap-southeast-7", PartitionAWS, "USD", "ap-south-1", true},
		{"cn-north-1", PartitionChina, "CNY", "cn-northwest-1", true},
		{"cn-northwest-1", PartitionChina, "CNY", "cn-northwest-1", true},
		{"us-gov-west-1", PartitionGovCloud, "USD", "", false},
		{"us-gov-east-1", PartitionGovCloud, "USD", "", false},
		{"us-iso-east-1", "", "USD", "", false},
		{"us-isob-east-1", "", "USD", "", false},
		{"eusc-de-east-1", "", "USD", "", false},
		{"", "", "USD", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.region, func(t *testing.T) {
			assert.Equal(t, tc.partition, Partition(tc.region))
			assert.Equal(t, tc.currency, Currency(tc.region))
			assert.Equal(t, tc.api, HasPricingAPI(tc.region))
			assert.Equal(t, tc.endpoint, EndpointRegion(tc.region), "never another partition's endpoint")
		})
	}
}

func TestGovCloudAndChinaNeverPriceFromUSEast1(t *testing.T) {
	useast1, err := NewProvider("us-east-1")
	require.NoError(t, err)
	commercial, _ := useast1.OnDemand("m5.large")
	cases := []struct {
		region, source, currency string
		m5large                  float64
	}{
		{"us-gov-west-1", "static table for us-gov-west-1 generated 2025-04-24T13:17:44Z", "USD", 0.121},
		{"us-gov-east-1", "static table for us-gov-east-1 generated 2025-04-24T13:17:44Z", "USD", 0.121},
		{"cn-north-1", "static table for cn-north-1 generated 2024-11-06T01:00:11Z, in CNY", "CNY", 1.013},
		// Not in the table: the shipped China table stands in, in CNY, until China's Pricing API answers.
		{"cn-northwest-1", "static table for cn-north-1 (fallback for cn-northwest-1) generated 2024-11-06T01:00:11Z, in CNY", "CNY", 1.013},
		{"us-gov-north-9", "static table for us-gov-west-1 (fallback for us-gov-north-9) generated 2025-04-24T13:17:44Z", "USD", 0.121},
	}
	for _, tc := range cases {
		t.Run(tc.region, func(t *testing.T) {
			p, err := NewProvider(tc.region)
			require.NoError(t, err)
			assert.Equal(t, tc.source, p.OnDemandSourceInfo())
			assert.NotContains(t, p.OnDemandSourceInfo(), "us-east-1")
			assert.Equal(t, tc.currency, p.Currency())
			v, ok := p.OnDemand("m5.large")
			require.True(t, ok)
			assert.InDelta(t, tc.m5large, v, 1e-9)
			assert.NotEqual(t, commercial, v)
		})
	}
}

func TestRegionOfAPartitionWithoutPricesIsRefused(t *testing.T) {
	for _, region := range []string{"us-iso-east-1", "eusc-de-east-1", "not-a-region"} {
		_, err := NewProvider(region)
		require.ErrorIs(t, err, ErrNoPartitionPrices, region)
		assert.Contains(t, err.Error(), "pricing region "+region)
	}
}

func TestGovCloudNeverReadsThePricingAPI(t *testing.T) {
	p, err := NewProvider("us-gov-west-1")
	require.NoError(t, err)
	src := &countingSource{}
	err = p.RefreshOnDemand(context.Background(), src, time.Now())
	require.ErrorIs(t, err, ErrNoPricingAPI)
	store := &memoryStore{}
	r := NewOnDemandRefresher(p, src, store, time.Now)
	res, err := r.Refresh(context.Background())
	require.NoError(t, err)
	assert.Equal(t, NoPricingAPINote, res.Skipped)
	assert.Zero(t, src.calls, "GovCloud has no Pricing API: nothing asks one")
	assert.Zero(t, store.puts)
	assert.Empty(t, p.DecisionNote())
}

func TestChinaReadsPricesInCNY(t *testing.T) {
	doc := `{"product":{"productFamily":"Compute Instance","attributes":{"instanceType":"m5.large","regionCode":"cn-north-1",
	"operatingSystem":"Linux","tenancy":"Shared","preInstalledSw":"NA","capacitystatus":"Used","usagetype":"CNN1-BoxUsage:m5.large"}},
	"terms":{"OnDemand":{"t":{"priceDimensions":{"d":{"unit":"Hrs","pricePerUnit":{"CNY":"1.0130000000"}}}}}}}`
	name, price, skip := ReadPriceListItem(doc, "cn-north-1")
	assert.Empty(t, skip)
	assert.Equal(t, "m5.large", name)
	assert.InDelta(t, 1.013, price, 1e-9)
	_, _, skip = ReadPriceListItem(doc, "us-east-1")
	assert.Equal(t, "another region", skip)

	p, err := NewProvider("cn-north-1")
	require.NoError(t, err)
	assert.Contains(t, p.DecisionNote(), "prices are CNY per hour")
}

type countingSource struct{ calls int }

func (c *countingSource) OnDemandPrices(context.Context, string) (map[string]float64, error) {
	c.calls++
	return nil, errors.New("must not be called")
}

type memoryStore struct{ puts int }

func (m *memoryStore) OnDemandPrices(context.Context) (state.OnDemandPrices, error) {
	return state.OnDemandPrices{}, state.ErrNotFound
}

func (m *memoryStore) PutOnDemandPrices(context.Context, state.OnDemandPrices) error {
	m.puts++
	return nil
}
