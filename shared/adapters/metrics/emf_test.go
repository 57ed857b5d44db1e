package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteIsOneEMFLine(t *testing.T) {
	var buf bytes.Buffer
	at := time.UnixMilli(1_795_000_000_000)
	require.NoError(t, Write(&buf, Record{Dimensions: map[string]string{"nodepool": "default", "cluster": "prod"},
		Values: map[string]float64{"nodepools_usage_cpu": 20, "nodepools_limit_cpu": 16}, Units: map[string]string{"nodepools_usage_cpu": "None"}}, at))
	assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("\n")))
	var got map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &got))
	assert.Equal(t, "prod", got["cluster"])
	assert.Equal(t, "default", got["nodepool"])
	assert.EqualValues(t, 20, got["nodepools_usage_cpu"])
	aws := got["_aws"].(map[string]any)
	assert.EqualValues(t, at.UnixMilli(), aws["Timestamp"])
	cw := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
	assert.Equal(t, "Nodewright", cw["Namespace"])
	assert.Equal(t, []any{[]any{"cluster", "nodepool"}}, cw["Dimensions"])
	assert.Equal(t, []any{map[string]any{"Name": "nodepools_limit_cpu", "Unit": "Count"}, map[string]any{"Name": "nodepools_usage_cpu", "Unit": "None"}},
		cw["Metrics"])
}

func TestWriteRefusesBadRecords(t *testing.T) {
	var buf bytes.Buffer
	for want, r := range map[string]Record{
		"no values":                 {},
		"x is not a number":         {Values: map[string]float64{"x": math.NaN()}},
		"dimension nodepool has no": {Dimensions: map[string]string{"nodepool": ""}, Values: map[string]float64{"x": 1}},
		"x is both a dimension and": {Dimensions: map[string]string{"x": "a"}, Values: map[string]float64{"x": 1}},
	} {
		assert.ErrorContains(t, Write(&buf, r, time.Now()), want)
	}
	assert.Zero(t, buf.Len(), "nothing written for a bad record")
}

func TestOrUnknownNamesAnEmptyDimension(t *testing.T) {
	assert.Equal(t, Unknown, OrUnknown(""))
	assert.Equal(t, "spot", OrUnknown("spot"))
}
