package main

import (
	"encoding/json"
	"fmt"
	"io"
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

// onDemandFromEC2Instances reads an ec2instances.info instances.json and returns, for each of regions,
// instance type → hourly price, with what it skipped. Only current-generation, non-Mac types with a price
// above zero are kept. A region left with no prices is an error: the wrong file or a misspelt region.
func onDemandFromEC2Instances(r io.Reader, regions []string) (map[string]map[string]float64, map[string]skipCounts, error) {
	var records []instanceRecord
	if err := json.NewDecoder(r).Decode(&records); err != nil {
		return nil, nil, fmt.Errorf("decoding instances.json (want a JSON array of instance records): %w", err)
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
