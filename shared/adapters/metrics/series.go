package metrics

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// MonthlyCostPerSeries is CloudWatch's price of one custom metric (a name with one set of dimension
// values) a month, in US dollars, for the first 10,000; a series not written in a month costs nothing.
const MonthlyCostPerSeries = 0.30

// Series are the CloudWatch metrics an EMF record (as Records reads it) writes to: each metric name with
// its dimensions' values, as "name{dim=value,...}" with the dimensions sorted.
func Series(rec map[string]any) []string {
	var out []string
	for _, dir := range directives(rec) {
		sets, _ := dir["Dimensions"].([]any)
		for _, set := range sets {
			names, _ := set.([]any)
			var dims []string
			for _, d := range names {
				name, _ := d.(string)
				dims = append(dims, fmt.Sprintf("%s=%v", name, rec[name]))
			}
			sort.Strings(dims)
			for _, m := range metricDefs(dir) {
				out = append(out, m.name+"{"+strings.Join(dims, ",")+"}")
			}
		}
	}
	return out
}

// Check reports what is wrong with an EMF record against Catalog: a metric it does not list, dimensions
// other than DimCluster and the metric's own, or another unit.
func Check(rec map[string]any) error {
	for _, dir := range directives(rec) {
		sets, _ := dir["Dimensions"].([]any)
		for _, set := range sets {
			names, _ := set.([]any)
			var dims []string
			for _, d := range names {
				name, _ := d.(string)
				dims = append(dims, name)
			}
			sort.Strings(dims)
			for _, m := range metricDefs(dir) {
				spec, ok := Catalog[m.name]
				if !ok {
					return fmt.Errorf("metric %s is not in the catalog", m.name)
				}
				want := append([]string{DimCluster}, spec.Dims...)
				sort.Strings(want)
				if !slices.Equal(dims, want) {
					return fmt.Errorf("metric %s has dimensions %v, want %v", m.name, dims, want)
				}
				unit := spec.Unit
				if unit == "" {
					r, _ := rec[DimResourceType].(string)
					unit = ResourceUnit(r)
				}
				if m.unit != unit {
					return fmt.Errorf("metric %s has unit %s, want %s", m.name, m.unit, unit)
				}
			}
		}
	}
	return nil
}

type metricDef struct{ name, unit string }

func directives(rec map[string]any) []map[string]any {
	meta, _ := rec["_aws"].(map[string]any)
	list, _ := meta["CloudWatchMetrics"].([]any)
	var out []map[string]any
	for _, d := range list {
		if dir, ok := d.(map[string]any); ok && dir["Namespace"] == Namespace {
			out = append(out, dir)
		}
	}
	return out
}

func metricDefs(dir map[string]any) []metricDef {
	defs, _ := dir["Metrics"].([]any)
	var out []metricDef
	for _, def := range defs {
		if m, ok := def.(map[string]any); ok {
			name, _ := m["Name"].(string)
			unit, _ := m["Unit"].(string)
			out = append(out, metricDef{name, unit})
		}
	}
	return out
}
