package runmetrics

import (
	"fmt"
	"io"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

// emitter writes one run's records; the first failure sticks and later writes are skipped.
type emitter struct {
	w       io.Writer
	cluster string
	at      time.Time
	err     error
}

func newEmitter(w io.Writer, cluster string, at time.Time) *emitter {
	return &emitter{w: w, cluster: cluster, at: at}
}

// dims are the cluster's dimension and kv's pairs (name, value, ...); an empty value becomes
// metrics.Unknown, so a claim without a NodePool or zone still counts.
func (e *emitter) dims(kv []string) map[string]string {
	d := map[string]string{metrics.DimCluster: e.cluster}
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i]] = metrics.OrUnknown(kv[i+1])
	}
	return d
}

// unit is name's unit in the catalog, by resource type where it has none of its own.
func unit(name string, dims map[string]string) string {
	if u := metrics.Catalog[name].Unit; u != "" {
		return u
	}
	return metrics.ResourceUnit(dims[metrics.DimResourceType])
}

// values writes several metrics sharing the dimensions kv as one record.
func (e *emitter) values(values map[string]float64, kv ...string) {
	if e.err != nil || len(values) == 0 {
		return
	}
	d := e.dims(kv)
	units := map[string]string{}
	for name := range values {
		units[name] = unit(name, d)
	}
	if err := metrics.Write(e.w, metrics.Record{Dimensions: d, Values: values, Units: units}, e.at); err != nil {
		e.err = fmt.Errorf("%v: %w", kv, err)
	}
}

// one writes one metric with the dimensions kv.
func (e *emitter) one(name string, v float64, kv ...string) {
	e.values(map[string]float64{name: v}, kv...)
}

// samples writes each of vs as a datapoint of name.
func (e *emitter) samples(name string, vs []float64, kv ...string) {
	if e.err != nil || len(vs) == 0 {
		return
	}
	d := e.dims(kv)
	if err := metrics.WriteSamples(e.w, d, name, unit(name, d), vs, e.at); err != nil {
		e.err = fmt.Errorf("%s: %w", name, err)
	}
}

func seconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}
