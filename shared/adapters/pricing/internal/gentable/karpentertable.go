package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
)

// Lines of a price table generated into aws/karpenter-provider-aws (pkg/providers/pricing/
// zz_generated.pricing_*.go): a region opens a block (`"cn-north-1": {`), then each line lists
// `"instance.type": price` pairs. Only these facts are read; nothing of the file is kept but the prices.
var (
	karpenterRegionLine = regexp.MustCompile(`^\s*"([a-z]{2}(?:-[a-z]+)+-[0-9]+)":\s*\{\s*$`)
	karpenterPricePair  = regexp.MustCompile(`"([a-z0-9-]+\.[a-z0-9-]+)":\s*([0-9]+(?:\.[0-9]+)?)`)
)

// onDemandFromKarpenterTable reads such a generated table and returns, for each of regions (every region
// it lists when regions is nil), instance type → hourly price. A region left with no prices is an error:
// the wrong file or a misspelt region.
func onDemandFromKarpenterTable(r io.Reader, regions []string) (map[string]map[string]float64, error) {
	all := map[string]map[string]float64{}
	region := ""
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := karpenterRegionLine.FindStringSubmatch(line); m != nil {
			region = m[1]
			if all[region] == nil {
				all[region] = map[string]float64{}
			}
			continue
		}
		for _, m := range karpenterPricePair.FindAllStringSubmatch(line, -1) {
			if region == "" {
				return nil, fmt.Errorf("line %d: a price before any region", n)
			}
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil || !(v > 0) {
				return nil, fmt.Errorf("line %d: %s: price %q is not a number above zero", n, m[1], m[2])
			}
			all[region][m[1]] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the generated table: %w", err)
	}
	if regions == nil {
		regions = sortedRegions(all)
	}
	out := map[string]map[string]float64{}
	for _, region := range regions {
		if len(all[region]) == 0 {
			return nil, fmt.Errorf("region %s: no prices in the generated table", region)
		}
		out[region] = all[region]
	}
	return out, nil
}
