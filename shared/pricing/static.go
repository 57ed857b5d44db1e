package pricing

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
)

//go:embed data/on-demand.json
var staticTable []byte

// StaticTable is the shipped on-demand price table.
type StaticTable struct {
	Source      string                        `json:"source"`
	GeneratedAt string                        `json:"generatedAt"`
	Currency    string                        `json:"currency"`
	Regions     map[string]map[string]float64 `json:"regions"`
}

// LoadStatic decodes the shipped on-demand price table.
func LoadStatic() (StaticTable, error) {
	var t StaticTable
	if err := json.Unmarshal(staticTable, &t); err != nil {
		return t, fmt.Errorf("decoding the shipped on-demand price table: %w", err)
	}
	return t, nil
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
