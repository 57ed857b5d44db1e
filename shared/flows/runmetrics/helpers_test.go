package runmetrics

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

// emitted runs write and reads its records back, checking each against the catalog (names,
// dimensions, units) and the cluster dimension.
func emitted(t *testing.T, write func(io.Writer) error) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, write(&buf))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	for _, r := range recs {
		assert.NoError(t, metrics.Check(r))
		assert.Equal(t, "prod", r[metrics.DimCluster])
	}
	return recs
}

// valuesOf are name's values in recs keyed by the values of dims joined with "/" ("" without dims); a
// record of samples gives its list.
func valuesOf(recs []map[string]any, name string, dims ...string) map[string]any {
	out := map[string]any{}
	for _, r := range recs {
		v, ok := r[name]
		if !ok {
			continue
		}
		var key []string
		for _, d := range dims {
			s, _ := r[d].(string)
			key = append(key, s)
		}
		out[strings.Join(key, "/")] = v
	}
	return out
}

// names are the metrics recs carry.
func names(recs []map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, r := range recs {
		for _, n := range metrics.MetricNames(r) {
			out[n] = true
		}
	}
	return out
}
