package pricing

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// staticTable is data/on-demand.json: Linux, shared-tenancy, on-demand hourly prices for every
// commercial region, both GovCloud regions and cn-north-1, each region with its own source, date and (in
// China, CNY) currency. It is the fallback when the AWS Pricing API cannot be read, and all there is in
// GovCloud, which has no Pricing API; data/README.md says where each region comes from and how to
// regenerate it.
//
//   - us-east-1: the AWS Price List as published in aws/karpenter-provider-aws's generated price table,
//     commit 1d927085dd81 (generated 2026-07-20T13:44:30Z); every type in it.
//   - cn-north-1, in CNY: the China table generated into the same repository at that commit (generated
//     2024-11-06T01:00:11Z).
//   - every other region: the ec2instances.info data embedded in the Go module
//     github.com/cristim/ec2-instances-info v0.0.0-20250528091325-32acf84f42eb (data/instances.json,
//     last updated by its commit f9eafba8b0c9 at 2025-04-24T13:17:44Z); current-generation types only,
//     written by internal/gentable.
//
// The file is compact (see staticFile): one list of type names shared by all regions and, per region, one
// array of prices in that order.
//
//go:embed data/on-demand.json
var staticTable []byte

// StaticTable is the shipped on-demand price table, decoded. Currency is the table's ("USD per hour");
// a region priced in another currency names it in its source (see CurrencyOf).
type StaticTable struct {
	Currency string
	Sources  map[string]RegionSource
	Regions  map[string]map[string]float64
}

// RegionSource says where one region's shipped prices come from, when that source took them and, when
// it is not the table's, their currency ("CNY per hour").
type RegionSource struct {
	Source      string `json:"source"`
	GeneratedAt string `json:"generatedAt"`
	Currency    string `json:"currency,omitempty"`
}

// CurrencyOf is the currency of region's prices: its own when its source names one, else the table's.
func (t StaticTable) CurrencyOf(region string) string {
	if c := t.Sources[region].Currency; c != "" {
		return c
	}
	return t.Currency
}

// LoadStatic decodes the shipped on-demand price table.
func LoadStatic() (StaticTable, error) {
	t, err := ParseStatic(staticTable)
	if err != nil {
		return t, fmt.Errorf("decoding the shipped on-demand price table: %w", err)
	}
	return t, nil
}

// ParseStatic decodes a table in the data/on-demand.json format and checks it (Validate).
func ParseStatic(data []byte) (StaticTable, error) {
	t, err := decodeStaticFile(data)
	if err != nil {
		return t, err
	}
	return t, t.Validate()
}

// EncodeStatic writes t in the data/on-demand.json format after checking it.
func EncodeStatic(t StaticTable) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("refusing to write an invalid table: %w", err)
	}
	return encodeStaticFile(t)
}

// Validate reports the first region whose prices or provenance are missing or wrong: every region has
// prices, every price is a finite number above zero, every region names its source and date, and its
// currency is its partition's (CNY in China, USD elsewhere).
func (t StaticTable) Validate() error {
	if t.Currency == "" {
		return errors.New("currency: missing")
	}
	if len(t.Regions) == 0 {
		return errors.New("regions: no region has prices")
	}
	for _, region := range t.StaticRegions() {
		prices := t.Regions[region]
		if len(prices) == 0 {
			return fmt.Errorf("regions.%s: no prices", region)
		}
		for _, name := range sortedKeys(prices) {
			if name == "" {
				return fmt.Errorf("regions.%s: an instance type name is empty", region)
			}
			if price := prices[name]; !(price > 0) || math.IsInf(price, 0) {
				return fmt.Errorf("regions.%s.%s: price %v is not a finite price above zero", region, name, price)
			}
		}
		src, ok := t.Sources[region]
		switch {
		case !ok:
			return fmt.Errorf("sources.%s: missing, every region must name its source", region)
		case src.Source == "":
			return fmt.Errorf("sources.%s.source: empty", region)
		case src.GeneratedAt == "":
			return fmt.Errorf("sources.%s.generatedAt: empty", region)
		}
		if code, _, _ := strings.Cut(t.CurrencyOf(region), " "); code != Currency(region) {
			return fmt.Errorf("sources.%s.currency: %q, but %s's list prices are in %s", region, t.CurrencyOf(region), region, Currency(region))
		}
	}
	for region := range t.Sources {
		if _, ok := t.Regions[region]; !ok {
			return fmt.Errorf("sources.%s: no prices for this region", region)
		}
	}
	return nil
}

// StaticRegions lists the regions the shipped table covers.
func (t StaticTable) StaticRegions() []string {
	return sortedKeys(t.Regions)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
