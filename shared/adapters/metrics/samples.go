package metrics

import (
	"io"
	"time"
)

// MaxSamples is how many values EMF takes for one metric in one record.
const MaxSamples = 100

// WriteSamples writes each of values as one datapoint of name (a distribution: durations, one per pod or
// per node), MaxSamples to a line. Nothing is written for no values.
func WriteSamples(w io.Writer, dims map[string]string, name, unit string, values []float64, at time.Time) error {
	for len(values) > 0 {
		n := min(len(values), MaxSamples)
		if err := Write(w, Record{Dimensions: dims, Samples: map[string][]float64{name: values[:n]},
			Units: map[string]string{name: unit}}, at); err != nil {
			return err
		}
		values = values[n:]
	}
	return nil
}
