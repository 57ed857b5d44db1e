package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// PricingAPI is the AWS Price List query the source makes; *pricing.Client satisfies it. The Pricing API
// has no local emulator, so tests point a real client at a local server that answers with hand-built
// GetProducts pages (testdata/getproducts).
type PricingAPI interface {
	GetProducts(ctx context.Context, in *awspricing.GetProductsInput, optFns ...func(*awspricing.Options)) (*awspricing.GetProductsOutput, error)
}

var _ PricingAPI = (*awspricing.Client)(nil)

// EndpointRegion is the region whose Pricing API endpoint serves prices for region: the API lives in
// us-east-1, with copies in ap-south-1 and eu-central-1 that are closer to those geographies; China's
// partition has its own in cn-northwest-1 (the SDK resolves its amazonaws.com.cn host from the region).
// GovCloud and the isolated partitions have none: "" (see HasPricingAPI), never another partition's.
func EndpointRegion(region string) string {
	switch Partition(region) {
	case PartitionChina:
		return "cn-northwest-1"
	case PartitionAWS:
	default:
		return ""
	}
	switch {
	case strings.HasPrefix(region, "ap-"):
		return "ap-south-1"
	case strings.HasPrefix(region, "eu-"), strings.HasPrefix(region, "me-"), strings.HasPrefix(region, "il-"), strings.HasPrefix(region, "af-"):
		return "eu-central-1"
	}
	return "us-east-1"
}

// APIMaxAttempts is how many times the client tries one GetProducts page. The Price List API allows a
// few requests per second per account and answers ThrottlingException beyond; the SDK's standard retryer
// retries that (and 5xx and transport errors) with jittered exponential backoff up to APIMaxBackoff. The
// caller's context deadline bounds the whole read whatever the attempts left.
const (
	APIMaxAttempts = 8
	APIMaxBackoff  = 5 * time.Second
)

// NewAPIClient returns a Pricing API client for prices in cfg's region: its endpoint region is
// EndpointRegion's and throttling is retried as APIMaxAttempts says. optFns run last (tests set
// BaseEndpoint there).
func NewAPIClient(cfg aws.Config, optFns ...func(*awspricing.Options)) *awspricing.Client {
	return newAPIClient(cfg, nil, optFns...)
}

// newAPIClient is NewAPIClient with the retryer's backoff replaced when backoff is set (tests wait
// milliseconds, not seconds, between attempts).
func newAPIClient(cfg aws.Config, backoff retry.BackoffDelayer, optFns ...func(*awspricing.Options)) *awspricing.Client {
	region := cfg.Region
	return awspricing.NewFromConfig(cfg, append([]func(*awspricing.Options){func(o *awspricing.Options) {
		o.Region = EndpointRegion(region)
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = APIMaxAttempts
			so.MaxBackoff = APIMaxBackoff
			if backoff != nil {
				so.Backoff = backoff
			}
		})
	}}, optFns...)...)
}

// APISource reads on-demand Linux prices for shared tenancy from the AWS Price List API.
type APISource struct {
	API PricingAPI
}

var _ OnDemandSource = APISource{}

// apiPageSize is the largest page GetProducts serves.
const apiPageSize = 100

// OnDemandPrices returns instance type → hourly price (in Currency(region)) for region, following NextToken to the last
// page. The request filters to Linux, shared tenancy, no pre-installed software, capacity status "Used"
// and on-demand; each document is checked again (see ReadPriceListItem) and entries that are not hourly
// prices above zero in the region's currency are skipped. A failed page fails the whole read, so a partial table never
// replaces a complete one.
func (s APISource) OnDemandPrices(ctx context.Context, region string) (map[string]float64, error) {
	prices, _, err := s.read(ctx, region)
	return prices, err
}

// PriceListStats counts what one read kept and why it skipped the rest.
type PriceListStats struct {
	Pages, Documents, Kept int
	Skipped                map[string]int // reason → documents
}

func (s APISource) read(ctx context.Context, region string) (map[string]float64, PriceListStats, error) {
	filter := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
	}
	pager := awspricing.NewGetProductsPaginator(s.API, &awspricing.GetProductsInput{
		ServiceCode:   aws.String("AmazonEC2"),
		FormatVersion: aws.String("aws_v1"),
		MaxResults:    aws.Int32(apiPageSize),
		Filters: []pricingtypes.Filter{
			filter("regionCode", region),
			filter("operatingSystem", "Linux"),
			filter("preInstalledSw", "NA"),
			filter("tenancy", "Shared"),
			filter("capacitystatus", "Used"),
			filter("marketoption", "OnDemand"),
			filter("productFamily", "Compute Instance"),
		},
	}, func(o *awspricing.GetProductsPaginatorOptions) { o.StopOnDuplicateToken = true })
	prices := map[string]float64{}
	stats := PriceListStats{Skipped: map[string]int{}}
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, stats, fmt.Errorf("reading the price list for %s (page %d): %w", region, stats.Pages+1, err)
		}
		stats.Pages++
		for _, doc := range page.PriceList {
			stats.Documents++
			name, price, skip := ReadPriceListItem(doc, region)
			if skip != "" {
				stats.Skipped[skip]++
				continue
			}
			if old, seen := prices[name]; seen && old != price {
				stats.Skipped["second price for one type"]++
				continue
			}
			prices[name] = price
			stats.Kept++
		}
	}
	return prices, stats, nil
}

// priceListItem is the part of a Price List product document the source reads.
type priceListItem struct {
	Product struct {
		ProductFamily string `json:"productFamily"`
		Attributes    struct {
			InstanceType    string `json:"instanceType"`
			RegionCode      string `json:"regionCode"`
			OperatingSystem string `json:"operatingSystem"`
			Tenancy         string `json:"tenancy"`
			PreInstalledSw  string `json:"preInstalledSw"`
			CapacityStatus  string `json:"capacitystatus"`
			UsageType       string `json:"usagetype"`
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

// ReadPriceListItem reads one Price List document (a JSON string in GetProducts' PriceList) and returns
// its instance type and hourly on-demand price in region's currency (CNY in China, USD elsewhere; see
// Currency), or why it is skipped: a malformed document, another
// region, an operating system other than Linux, tenancy other than Shared, pre-installed software, a
// capacity status other than Used (unused or allocated capacity reservations), a usage type other than
// BoxUsage, or no positive hourly on-demand price in that currency. The request's filters should leave only wanted
// documents; the checks keep a filter the API ignores from mixing in wrong prices.
func ReadPriceListItem(doc, region string) (string, float64, string) {
	var item priceListItem
	if err := json.Unmarshal([]byte(doc), &item); err != nil {
		return "", 0, "malformed document"
	}
	a := item.Product.Attributes
	currency := Currency(region)
	switch {
	case a.InstanceType == "":
		return "", 0, "no instance type"
	case a.RegionCode != region:
		return "", 0, "another region"
	case a.OperatingSystem != "Linux":
		return "", 0, "operating system not Linux"
	case a.Tenancy != "Shared":
		return "", 0, "tenancy not Shared"
	case a.PreInstalledSw != "NA":
		return "", 0, "pre-installed software"
	case a.CapacityStatus != "Used":
		return "", 0, "capacity status not Used"
	case !isBoxUsage(a.UsageType):
		return "", 0, "usage type not BoxUsage"
	}
	for _, term := range item.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			if dim.Unit != "Hrs" {
				continue
			}
			amount, ok := dim.PricePerUnit[currency]
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(amount, 64)
			if err == nil && v > 0 && v < 1e6 {
				return a.InstanceType, v, ""
			}
		}
	}
	return "", 0, "no positive hourly " + currency + " price"
}

// isBoxUsage tells the usage type of an on-demand instance hour ("BoxUsage:m5.large", with a region prefix
// such as "EUW1-" outside us-east-1) from dedicated ("DedicatedUsage:"), host ("HostBoxUsage:") and
// reservation usage types.
func isBoxUsage(usageType string) bool {
	if _, rest, ok := strings.Cut(usageType, "-"); ok && !strings.HasPrefix(usageType, "BoxUsage") {
		usageType = rest
	}
	return strings.HasPrefix(usageType, "BoxUsage:")
}
