package pricing

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// SpotPriceAPI is the EC2 call the provider uses; *ec2.Client satisfies it.
type SpotPriceAPI interface {
	DescribeSpotPriceHistory(ctx context.Context, in *ec2.DescribeSpotPriceHistoryInput, optFns ...func(*ec2.Options)) (*ec2.DescribeSpotPriceHistoryOutput, error)
}

var _ SpotPriceAPI = (*ec2.Client)(nil)

// OnDemandSource fetches current on-demand prices for a region (the AWS Pricing API in production).
type OnDemandSource interface {
	OnDemandPrices(ctx context.Context, region string) (map[string]float64, error)
}

// ErrNoPrices is returned when a region has no on-demand prices at all.
var ErrNoPrices = errors.New("no on-demand prices for region")

// ErrIsolated is returned when an isolated provider (Isolate) is asked to read the Pricing API.
var ErrIsolated = errors.New(IsolatedNote)

// ErrNoPricingAPI is returned when a provider for a region whose partition has no Pricing API (GovCloud)
// is asked to read it.
var ErrNoPricingAPI = errors.New(NoPricingAPINote)

// NoPricingAPINote says why a GovCloud provider keeps the shipped table.
const NoPricingAPINote = "GovCloud has no Pricing API: the shipped table prices"

type spotKey struct{ instanceType, zone string }

// Provider answers price questions for one region.
type Provider struct {
	region string

	mu              sync.RWMutex
	onDemand        map[string]float64
	onDemandSource  string
	onDemandUpdated time.Time
	knownTypes      int // types in the shipped table for the region (or the smallest covered region's)
	spot            map[spotKey]float64
	spotUpdated     time.Time
	// isolated keeps the shipped on-demand table: no Pricing API, no stored table (Isolate).
	isolated bool
}

// FallbackRegion's shipped prices stand in for a commercial region the table does not cover until the
// Pricing API answers (as Karpenter does): list prices differ a little between regions, but the order of
// instance types by price — what the scheduler uses — barely does. A China or GovCloud region the table
// does not cover starts from its own partition's (see partitionFallback), never from this one.
const FallbackRegion = "us-east-1"

// NewProvider starts from the shipped table for region (every commercial region, both GovCloud regions
// and cn-north-1 are covered), or for a region it does not cover from the fallback region of the same
// partition: us-east-1, cn-north-1 (in CNY) or us-gov-west-1. OnDemandSourceInfo says which, and the
// date of the prices used. A region of a partition without shipped prices (the isolated partitions) is
// refused with ErrNoPartitionPrices, naming it: prices from another partition would be in the wrong
// currency or for offerings that do not exist there.
func NewProvider(region string) (*Provider, error) {
	t, err := LoadStatic()
	if err != nil {
		return nil, err
	}
	partition := Partition(region)
	p := &Provider{region: region, onDemand: map[string]float64{}, spot: map[spotKey]float64{}}
	tableRegion, label := region, region
	p.knownTypes = len(t.Regions[region])
	if _, ok := t.Regions[region]; !ok {
		fallback, ok := partitionFallback[partition]
		if _, shipped := t.Regions[fallback]; !ok || !shipped {
			return nil, fmt.Errorf("pricing region %s (partition %q): %w", region, partition, ErrNoPartitionPrices)
		}
		tableRegion, label = fallback, fallback+" (fallback for "+region+")"
		// A region the table does not cover is new; judge a fresh read by the smallest region covered in
		// its partition.
		p.knownTypes = len(t.Regions[fallback])
		for r, prices := range t.Regions {
			if Partition(r) == partition {
				p.knownTypes = min(p.knownTypes, len(prices))
			}
		}
	}
	for k, v := range t.Regions[tableRegion] {
		p.onDemand[k] = v
	}
	p.onDemandSource = "static table for " + label + " generated " + t.Sources[tableRegion].GeneratedAt
	if c := Currency(region); c != "USD" {
		p.onDemandSource += ", in " + c
	}
	return p, nil
}

// Currency is the currency of the provider's prices (Currency of its region): CNY in China, USD
// elsewhere. Prices are never converted; what shows them should say which.
func (p *Provider) Currency() string { return Currency(p.region) }

// OnDemand returns the on-demand hourly price of an instance type.
func (p *Provider) OnDemand(instanceType string) (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	v, ok := p.onDemand[instanceType]
	return v, ok
}

// Spot returns the spot hourly price of an instance type in a zone; until a spot price has been seen it is
// the on-demand price, and a seen price is never taken below SpotFloor of on-demand.
func (p *Provider) Spot(instanceType, zone string) (float64, bool) {
	p.mu.RLock()
	v, ok := p.spot[spotKey{instanceType, zone}]
	p.mu.RUnlock()
	od, hasOD := p.OnDemand(instanceType)
	switch {
	case ok && hasOD:
		return floorSpot(v, od), true
	case ok:
		return v, true
	}
	return od, hasOD
}

// Price is the hourly price of an instance of the type in the zone bought as capacityType ("spot",
// "on-demand" or "reserved"; a reservation is paid for whether it is used or not, so using it costs 0).
func (p *Provider) Price(instanceType, zone, capacityType string) (float64, bool) {
	switch capacityType {
	case "spot":
		return p.Spot(instanceType, zone)
	case "on-demand":
		return p.OnDemand(instanceType)
	case "reserved":
		return 0, true
	}
	return 0, false
}

// OnDemandSourceInfo says where the current on-demand prices came from.
func (p *Provider) OnDemandSourceInfo() string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.isolated {
		return p.onDemandSource + "; " + IsolatedNote
	}
	return p.onDemandSource
}

// RefreshOnDemand reads on-demand prices from src (the Pricing API) and replaces the ones held when the
// answer is a complete, sane table (see MinOnDemandShare). On failure the previous prices stay and the
// error is returned for the caller to log: stale prices beat no prices, and a partial table never
// replaces a complete one.
func (p *Provider) RefreshOnDemand(ctx context.Context, src OnDemandSource, now time.Time) error {
	if p.Isolated() {
		return fmt.Errorf("refreshing on-demand prices for %s: %w", p.region, ErrIsolated)
	}
	if !HasPricingAPI(p.region) {
		return fmt.Errorf("refreshing on-demand prices for %s: %w", p.region, ErrNoPricingAPI)
	}
	prices, err := src.OnDemandPrices(ctx, p.region)
	if err != nil {
		return fmt.Errorf("refreshing on-demand prices for %s (keeping %s): %w", p.region, p.OnDemandSourceInfo(), err)
	}
	if len(prices) == 0 {
		return fmt.Errorf("refreshing on-demand prices for %s (keeping %s): %w", p.region, p.OnDemandSourceInfo(), ErrNoPrices)
	}
	if err := checkOnDemand(prices, p.knownTypes); err != nil {
		return fmt.Errorf("refreshing on-demand prices for %s (keeping %s): %w", p.region, p.OnDemandSourceInfo(), err)
	}
	t := OnDemandTable{Region: p.region, ObservedAt: now, Source: OnDemandAPISource, Prices: prices}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onDemand = prices
	p.onDemandSource = onDemandLabel(t)
	p.onDemandUpdated = now
	return nil
}

// OnDemandAPISource names the AWS Pricing API as a table's source.
const OnDemandAPISource = "AWS Pricing API"

// RefreshSpot reads the latest Linux/UNIX spot price of every instance type in every zone of the region
// (DescribeSpotPriceHistory with StartTime now returns the price in force, one per type and zone).
func (p *Provider) RefreshSpot(ctx context.Context, api SpotPriceAPI, now time.Time) error {
	latest := map[spotKey]struct {
		price float64
		at    time.Time
	}{}
	pager := ec2.NewDescribeSpotPriceHistoryPaginator(api, &ec2.DescribeSpotPriceHistoryInput{
		StartTime:           aws.Time(now),
		ProductDescriptions: []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"},
	})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("reading spot price history in %s: %w", p.region, err)
		}
		for _, sp := range page.SpotPriceHistory {
			price, ok := parsePrice(sp)
			if !ok {
				continue
			}
			k := spotKey{string(sp.InstanceType), aws.ToString(sp.AvailabilityZone)}
			at := aws.ToTime(sp.Timestamp)
			if cur, seen := latest[k]; !seen || at.After(cur.at) {
				latest[k] = struct {
					price float64
					at    time.Time
				}{price, at}
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, v := range latest {
		p.spot[k] = v.price
	}
	p.spotUpdated = now
	return nil
}

// InstanceTypes lists the instance types with an on-demand price, sorted.
func (p *Provider) InstanceTypes() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]string, 0, len(p.onDemand))
	for k := range p.onDemand {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func parsePrice(sp ec2types.SpotPrice) (float64, bool) {
	var v float64
	if _, err := fmt.Sscan(aws.ToString(sp.SpotPrice), &v); err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}
