package pricing

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakePriceList serves price list documents in pages and records the filters it was asked for.
type fakePriceList struct {
	pages   [][]string
	failAt  int // page index that fails, -1 for none
	filters map[string]string
}

func (f *fakePriceList) GetProducts(_ context.Context, in *awspricing.GetProductsInput, _ ...func(*awspricing.Options)) (*awspricing.GetProductsOutput, error) {
	f.filters = map[string]string{}
	for _, flt := range in.Filters {
		f.filters[aws.ToString(flt.Field)] = aws.ToString(flt.Value)
	}
	i := 0
	if in.NextToken != nil {
		fmt.Sscan(aws.ToString(in.NextToken), &i)
	}
	if i == f.failAt {
		return nil, errors.New("throttled")
	}
	out := &awspricing.GetProductsOutput{PriceList: f.pages[i]}
	if i+1 < len(f.pages) {
		out.NextToken = aws.String(fmt.Sprint(i + 1))
	}
	return out, nil
}

// product is a Price List document shaped as the API returns it (trimmed to what matters).
func product(instanceType, unit, usd string) string {
	return fmt.Sprintf(`{"product":{"productFamily":"Compute Instance","attributes":{"instanceType":%q,"regionCode":"eu-west-1",
"operatingSystem":"Linux","tenancy":"Shared","capacitystatus":"Used","preInstalledSw":"NA"},"sku":"ABC123"},
"serviceCode":"AmazonEC2","terms":{"OnDemand":{"ABC123.JRTCKXETXF":{"offerTermCode":"JRTCKXETXF","sku":"ABC123",
"priceDimensions":{"ABC123.JRTCKXETXF.6YS6EN2CT7":{"unit":%q,"pricePerUnit":{"USD":%q},"description":"per hour"}}}}},
"version":"20261101000000","publicationDate":"2026-11-01T00:00:00Z"}`, instanceType, unit, usd)
}

func TestAPISourceReadsEveryPage(t *testing.T) {
	api := &fakePriceList{failAt: -1, pages: [][]string{
		{product("m5.large", "Hrs", "0.1070000000"), product("c5.large", "Hrs", "0.0960000000")},
		{product("r5.large", "Hrs", "0.1410000000"), product("x.free", "Hrs", "0.0000000000"), `{not json`, product("t3.nano", "Quantity", "5")},
	}}
	prices, err := APISource{API: api}.OnDemandPrices(context.Background(), "eu-west-1")
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"m5.large": 0.107, "c5.large": 0.096, "r5.large": 0.141}, prices,
		"zero prices, non-hourly units and malformed documents are skipped")
	assert.Equal(t, "eu-west-1", api.filters["regionCode"])
	assert.Equal(t, "Shared", api.filters["tenancy"])
	assert.Equal(t, "Linux", api.filters["operatingSystem"])
}

func TestAPISourceFailsWholeOnAFailedPage(t *testing.T) {
	api := &fakePriceList{failAt: 1, pages: [][]string{{product("m5.large", "Hrs", "0.2")}, {}}}
	_, err := APISource{API: api}.OnDemandPrices(context.Background(), "eu-west-1")
	require.Error(t, err)
	p, err := NewProvider("eu-west-1")
	require.NoError(t, err)
	require.Error(t, p.RefreshOnDemand(context.Background(), APISource{API: api}, time.Now()))
	v, _ := p.OnDemand("m5.large")
	assert.InDelta(t, 0.107, v, 1e-9, "a partial read never replaces eu-west-1's shipped price")
}

func TestEndpointRegion(t *testing.T) {
	for region, want := range map[string]string{
		"us-west-2": "us-east-1", "eu-west-1": "eu-central-1", "ap-northeast-1": "ap-south-1", "sa-east-1": "us-east-1", "me-south-1": "eu-central-1",
	} {
		assert.Equal(t, want, EndpointRegion(region), region)
	}
}
