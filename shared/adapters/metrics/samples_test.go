package metrics

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteSamplesSplitsIntoRecordsOfAtMostMaxSamples(t *testing.T) {
	var buf bytes.Buffer
	values := make([]float64, MaxSamples+5)
	for i := range values {
		values[i] = float64(i)
	}
	require.NoError(t, WriteSamples(&buf, map[string]string{DimCluster: "prod"}, PodsStartupDuration, "Seconds", values, time.Now()))
	recs, err := Records(buf.Bytes())
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Len(t, recs[0][PodsStartupDuration], MaxSamples)
	assert.Equal(t, []any{100.0, 101.0, 102.0, 103.0, 104.0}, recs[1][PodsStartupDuration])
	for _, r := range recs {
		assert.NoError(t, Check(r))
	}

	buf.Reset()
	require.NoError(t, WriteSamples(&buf, map[string]string{DimCluster: "prod"}, PodsStartupDuration, "Seconds", nil, time.Now()))
	assert.Zero(t, buf.Len(), "no values, no record")
	assert.ErrorContains(t, Write(&buf, Record{Samples: map[string][]float64{"x": make([]float64, MaxSamples+1)}}, time.Now()), "x needs 1 to 100 values")
}

func TestSeriesAndCheck(t *testing.T) {
	var buf bytes.Buffer
	at := time.Now()
	require.NoError(t, Write(&buf, Record{Dimensions: map[string]string{DimCluster: "prod", DimNodePool: "a", DimResourceType: "memory"},
		Values: map[string]float64{PoolUsage: 1, PoolLimit: 2}, Units: map[string]string{PoolUsage: "Bytes", PoolLimit: "Bytes"}}, at))
	require.NoError(t, Write(&buf, Record{Dimensions: map[string]string{"ClusterName": "prod", DimNodePool: "a"},
		Values: map[string]float64{ClaimsCreated: 1}}, at))
	require.NoError(t, Write(&buf, Record{Dimensions: map[string]string{DimCluster: "prod", DimNodePool: "a", DimResourceType: "cpu"},
		Values: map[string]float64{PoolUsage: 1}, Units: map[string]string{PoolUsage: "Bytes"}}, at))
	require.NoError(t, Write(&buf, Record{Dimensions: map[string]string{DimCluster: "prod"}, Values: map[string]float64{"nodeclaims_created": 1}}, at))
	recs, err := Records(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, []string{"nodepools_limit{cluster=prod,nodepool=a,resource_type=memory}", "nodepools_usage{cluster=prod,nodepool=a,resource_type=memory}"},
		Series(recs[0]))
	assert.NoError(t, Check(recs[0]))
	assert.ErrorContains(t, Check(recs[1]), "metric nodeclaims_created_total has dimensions [ClusterName nodepool], want [cluster nodepool]")
	assert.ErrorContains(t, Check(recs[2]), "metric nodepools_usage has unit Bytes, want Count")
	assert.ErrorContains(t, Check(recs[3]), "metric nodeclaims_created is not in the catalog")
}
