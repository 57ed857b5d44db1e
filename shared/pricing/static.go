package pricing

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// staticTable is data/on-demand.json: Linux, shared-tenancy, on-demand hourly USD prices per region, each
// region with its own source and date (data/README.md says where each comes from and how to regenerate).
//
//   - us-east-1: the AWS Price List as published in aws/karpenter-provider-aws's generated price table,
//     commit 1d927085dd81 (generated 2026-07-20T13:44:30Z); every type in it.
//   - us-east-2, us-west-2, eu-west-1: the ec2instances.info data embedded in the Go module
//     github.com/cristim/ec2-instances-info v0.0.0-20250528091325-32acf84f42eb (data/instances.json,
//     last updated by its commit f9eafba8b0c9 at 2025-04-24T13:17:44Z); current-generation types only,
//     written by internal/gentable.
//
//go:embed data/on-demand.json
var staticTable []byte

// StaticTable is the shipped on-demand price table.
type StaticTable struct {
	Currency string                        `json:"currency"`
	Sources  map[string]RegionSource       `json:"sources"`
	Regions  map[string]map[string]float64 `json:"regions"`
}

// RegionSource says where one region's shipped prices come from and when that source took them.
type RegionSource struct {
	Source      string `json:"source"`
	GeneratedAt string `json:"generatedAt"`
}

// LoadStatic decodes the shipped on-demand price table.
func LoadStatic() (StaticTable, error) {
	t, err := ParseStatic(staticTable)
	if err != nil {
		return t, fmt.Errorf("decoding the shipped on-demand price table: %w", err)
	}
	return t, nil
}

// ParseStatic decodes a table in the data/on-demand.json format and checks it: every region has prices,
// every price is above zero and every region names its source and date.
func ParseStatic(data []byte) (StaticTable, error) {
	var t StaticTable
	if err := json.Unmarshal(data, &t); err != nil {
		return t, err
	}
	return t, t.Validate()
}

// Validate reports the first region whose prices or provenance are missing or wrong.
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
		for name, price := range prices {
			if !(price > 0) {
				return fmt.Errorf("regions.%s.%s: price %v is not above zero", region, name, price)
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
	regions := make([]string, 0, len(t.Regions))
	for r := range t.Regions {
		regions = append(regions, r)
	}
	sort.Strings(regions)
	return regions
}
