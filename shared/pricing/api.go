package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// PricingAPI is the AWS Price List query the source makes; *pricing.Client satisfies it. The Pricing API
// has no local emulator, so tests use a fake that returns real-shaped price list documents.
type PricingAPI interface {
	GetProducts(ctx context.Context, in *awspricing.GetProductsInput, optFns ...func(*awspricing.Options)) (*awspricing.GetProductsOutput, error)
}

var _ PricingAPI = (*awspricing.Client)(nil)

// EndpointRegion is the region whose Pricing API endpoint serves prices for region: the API lives in
// us-east-1, with copies in ap-south-1 and eu-central-1 that are closer to those geographies.
func EndpointRegion(region string) string {
	switch {
	case strings.HasPrefix(region, "ap-"):
		return "ap-south-1"
	case strings.HasPrefix(region, "eu-"), strings.HasPrefix(region, "me-"), strings.HasPrefix(region, "il-"), strings.HasPrefix(region, "af-"):
		return "eu-central-1"
	}
	return "us-east-1"
}

// APISource reads on-demand Linux prices for shared tenancy from the AWS Price List API.
type APISource struct {
	API PricingAPI
}

var _ OnDemandSource = APISource{}

// OnDemandPrices returns instance type → hourly USD price for region. Entries that are not hourly USD
// prices above zero are skipped; a failed page fails the whole read, so a partial table never replaces a
// complete one.
func (s APISource) OnDemandPrices(ctx context.Context, region string) (map[string]float64, error) {
	filter := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
	}
	pager := awspricing.NewGetProductsPaginator(s.API, &awspricing.GetProductsInput{
		ServiceCode:   aws.String("AmazonEC2"),
		FormatVersion: aws.String("aws_v1"),
		Filters: []pricingtypes.Filter{
			filter("regionCode", region),
			filter("operatingSystem", "Linux"),
			filter("preInstalledSw", "NA"),
			filter("tenancy", "Shared"),
			filter("capacitystatus", "Used"),
			filter("marketoption", "OnDemand"),
			filter("productFamily", "Compute Instance"),
		},
	})
	prices := map[string]float64{}
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the price list for %s: %w", region, err)
		}
		for _, doc := range page.PriceList {
			if name, price, ok := parsePriceListItem(doc); ok {
				prices[name] = price
			}
		}
	}
	return prices, nil
}

// priceListItem is the part of a Price List product document the source reads.
type priceListItem struct {
	Product struct {
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

func parsePriceListItem(doc string) (string, float64, bool) {
	var item priceListItem
	if err := json.Unmarshal([]byte(doc), &item); err != nil || item.Product.Attributes.InstanceType == "" {
		return "", 0, false
	}
	for _, term := range item.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			if dim.Unit != "Hrs" {
				continue
			}
			if v, err := strconv.ParseFloat(dim.PricePerUnit["USD"], 64); err == nil && v > 0 {
				return item.Product.Attributes.InstanceType, v, true
			}
		}
	}
	return "", 0, false
}
