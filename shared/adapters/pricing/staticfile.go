package pricing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// staticFile is the layout of data/on-demand.json. Thirty-odd regions of up to ~1,400 types each would
// repeat every type name per region; instead Types names every type once, sorted, and each region's Prices
// is one array in that order, 0 where the region does not offer the type. Types with no price anywhere are
// not listed.
type staticFile struct {
	Currency string                      `json:"currency"`
	Types    []string                    `json:"types"`
	Regions  map[string]staticFileRegion `json:"regions"`
}

type staticFileRegion struct {
	Source      string    `json:"source"`
	GeneratedAt string    `json:"generatedAt"`
	Currency    string    `json:"currency,omitempty"` // when not the table's
	Prices      []float64 `json:"prices"`
}

func decodeStaticFile(data []byte) (StaticTable, error) {
	var f staticFile
	if err := json.Unmarshal(data, &f); err != nil {
		return StaticTable{}, err
	}
	t := StaticTable{Currency: f.Currency, Sources: map[string]RegionSource{}, Regions: map[string]map[string]float64{}}
	seen := make(map[string]bool, len(f.Types))
	for i, name := range f.Types {
		if name == "" {
			return t, fmt.Errorf("types[%d]: empty instance type name", i)
		}
		if seen[name] {
			return t, fmt.Errorf("types[%d]: %s is listed twice", i, name)
		}
		seen[name] = true
	}
	for region, r := range f.Regions {
		if len(r.Prices) != len(f.Types) {
			return t, fmt.Errorf("regions.%s.prices: %d prices for %d types", region, len(r.Prices), len(f.Types))
		}
		prices := map[string]float64{}
		for i, v := range r.Prices {
			switch {
			case v == 0: // not offered in this region
			case v < 0:
				return t, fmt.Errorf("regions.%s.prices[%d] (%s): price %v is negative", region, i, f.Types[i], v)
			default:
				prices[f.Types[i]] = v
			}
		}
		t.Regions[region] = prices
		t.Sources[region] = RegionSource{Source: r.Source, GeneratedAt: r.GeneratedAt, Currency: r.Currency}
	}
	return t, nil
}

// encodeStaticFile lays the file out one type name per line and one region per line, so a regeneration
// diffs by region.
func encodeStaticFile(t StaticTable) ([]byte, error) {
	names := map[string]bool{}
	for _, prices := range t.Regions {
		for name := range prices {
			names[name] = true
		}
	}
	types := sortedKeys(names)
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n%s: %s,\n%s: [\n", quote("currency"), quote(t.Currency), quote("types"))
	for i, name := range types {
		b.WriteString(quote(name))
		if i < len(types)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "],\n%s: {\n", quote("regions"))
	regions := t.StaticRegions()
	for i, region := range regions {
		prices := make([]float64, len(types))
		for j, name := range types {
			prices[j] = t.Regions[region][name]
			if math.IsNaN(prices[j]) || math.IsInf(prices[j], 0) {
				return nil, fmt.Errorf("regions.%s.%s: price %v is not finite", region, name, prices[j])
			}
		}
		src := t.Sources[region]
		if src.Currency == t.Currency {
			src.Currency = ""
		}
		line, err := json.Marshal(staticFileRegion{Source: src.Source, GeneratedAt: src.GeneratedAt, Currency: src.Currency, Prices: prices})
		if err != nil {
			return nil, fmt.Errorf("encoding regions.%s: %w", region, err)
		}
		fmt.Fprintf(&b, "%s: %s", quote(region), line)
		if i < len(regions)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n}\n")
	return b.Bytes(), nil
}

func quote(s string) string {
	out, _ := json.Marshal(s) // a string always encodes
	return string(out)
}
