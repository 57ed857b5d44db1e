// Package metrics writes CloudWatch Embedded Metric Format records: one JSON line on a Lambda function's
// standard output becomes metrics in CloudWatch, with no API call and no client (DESIGN decision 8).
package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// Namespace is every Nodewright metric's CloudWatch namespace.
const Namespace = "Nodewright"

// Unknown stands in for a dimension value that is not known (a claim that never launched has no capacity
// type); Write refuses an empty one, because CloudWatch would drop the whole record.
const Unknown = "unknown"

// OrUnknown is v, or Unknown when v is empty.
func OrUnknown(v string) string {
	if v == "" {
		return Unknown
	}
	return v
}

// Record is one EMF record: values that share the same dimensions and moment.
type Record struct {
	// Dimensions name the series, e.g. cluster and nodepool.
	Dimensions map[string]string
	// Values are the metrics, by name; Units their CloudWatch units (Count when absent).
	Values map[string]float64
	Units  map[string]string
	// Samples are metrics with several datapoints each (at most MaxSamples; see WriteSamples).
	Samples map[string][]float64
}

// Write writes r as one EMF line. It refuses a record without values, with a NaN or infinite value, or
// with a dimension that has no value, naming the culprit.
func Write(w io.Writer, r Record, at time.Time) error {
	if len(r.Values) == 0 && len(r.Samples) == 0 {
		return fmt.Errorf("metrics record: no values")
	}
	dims := make([]string, 0, len(r.Dimensions))
	line := map[string]any{}
	for k, v := range r.Dimensions {
		if v == "" {
			return fmt.Errorf("metrics record: dimension %s has no value", k)
		}
		dims = append(dims, k)
		line[k] = v
	}
	sort.Strings(dims)
	values := make(map[string][]float64, len(r.Values)+len(r.Samples))
	for name, v := range r.Values {
		values[name] = []float64{v}
	}
	for name, vs := range r.Samples {
		if _, twice := values[name]; twice || len(vs) == 0 || len(vs) > MaxSamples {
			return fmt.Errorf("metrics record: %s needs 1 to %d values, once", name, MaxSamples)
		}
		values[name] = vs
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	defs := make([]map[string]string, 0, len(names))
	for _, name := range names {
		for _, v := range values[name] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("metrics record: %s is not a number", name)
			}
		}
		if _, clash := line[name]; clash {
			return fmt.Errorf("metrics record: %s is both a dimension and a metric", name)
		}
		unit := r.Units[name]
		if unit == "" {
			unit = "Count"
		}
		defs = append(defs, map[string]string{"Name": name, "Unit": unit})
		if _, many := r.Samples[name]; many {
			line[name] = values[name]
		} else {
			line[name] = values[name][0]
		}
	}
	line["_aws"] = map[string]any{
		"Timestamp": at.UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace": Namespace, "Dimensions": [][]string{dims}, "Metrics": defs,
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
