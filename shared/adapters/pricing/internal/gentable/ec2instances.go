package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// instanceRecord is the part of one ec2instances.info instances.json entry the table needs. Prices are
// strings there; pricing.<region>.linux.ondemand is the Linux, shared-tenancy, on-demand hourly USD price
// (dedicated tenancy sits under a separate key).
type instanceRecord struct {
	InstanceType string `json:"instance_type"`
	Generation   string `json:"generation"`
	Pricing      map[string]struct {
		Linux struct {
			OnDemand *string `json:"ondemand"`
		} `json:"linux"`
	} `json:"pricing"`
}

// skipCounts says why records were left out of one region.
type skipCounts struct {
	NotOffered, PreviousGeneration, Mac, Unpriced int
}

// onDemandFromEC2Instances reads an ec2instances.info instances.json and returns, for each of regions
// (every commercial region the file prices when regions is nil), instance type → hourly price, with what
// it skipped. Only current-generation, non-Mac types with a price above zero are kept. A region left with
// no prices is an error: the wrong file or a misspelt region.
func onDemandFromEC2Instances(r io.Reader, regions []string) (map[string]map[string]float64, map[string]skipCounts, error) {
	var records []instanceRecord
	if err := json.NewDecoder(r).Decode(&records); err != nil {
		return nil, nil, fmt.Errorf("decoding instances.json (want a JSON array of instance records): %w", err)
	}
	if regions == nil {
		regions = commercialRegions(records)
	}
	out := map[string]map[string]float64{}
	skipped := map[string]skipCounts{}
	for _, region := range regions {
		prices := map[string]float64{}
		var skip skipCounts
		for i, rec := range records {
			if rec.InstanceType == "" {
				return nil, nil, fmt.Errorf("instances.json record %d: instance_type is empty", i)
			}
			p, ok := rec.Pricing[region]
			switch {
			case !ok || p.Linux.OnDemand == nil:
				skip.NotOffered++
				continue
			case rec.Generation != "current":
				skip.PreviousGeneration++
				continue
			case strings.HasPrefix(rec.InstanceType, "mac"):
				skip.Mac++
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(*p.Linux.OnDemand), 64)
			if err != nil || !(v > 0) {
				skip.Unpriced++
				continue
			}
			prices[rec.InstanceType] = v
		}
		if len(prices) == 0 {
			return nil, nil, fmt.Errorf("region %s: no current-generation Linux on-demand prices in instances.json", region)
		}
		out[region] = prices
		skipped[region] = skip
	}
	return out, skipped, nil
}

// commercialRegion matches an AWS commercial region code such as eu-west-1 or ap-southeast-7; Local Zones
// (us-east-1-bos-1) and Wavelength Zones (us-east-1-wl1-atl1), which ec2instances.info also prices, have
// more parts.
var commercialRegion = regexp.MustCompile(`^[a-z]{2}-[a-z]+-[0-9]+$`)

// commercialRegions lists, sorted, the commercial regions the records price: GovCloud (us-gov-*) and
// China (cn-*) are other partitions with their own Pricing API endpoints and are left out.
func commercialRegions(records []instanceRecord) []string {
	seen := map[string]bool{}
	for _, rec := range records {
		for region := range rec.Pricing {
			if commercialRegion.MatchString(region) && !strings.HasPrefix(region, "us-gov-") && !strings.HasPrefix(region, "cn-") {
				seen[region] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
