package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

var update = flag.Bool("update", false, "rewrite testdata/instance-types.json from moto")

// sampleCatalog is the checked-in catalog the plan tests and README use.
var sampleCatalog = filepath.Join("testdata", "instance-types.json")

// sampleZones are the zones the sample catalog offers.
var sampleZones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// inSample keeps the sample small: the c, m and r categories of generations 5 to 7, and the g5 GPU
// family so that GPU pods have somewhere to go.
func inSample(it *scheduling.InstanceType) bool {
	label := func(key string) string {
		if r, ok := it.Requirements[key]; ok {
			if v := r.Values(); len(v) == 1 {
				return v[0]
			}
		}
		return ""
	}
	if label(scheduling.LabelInstanceFamily) == "g5" {
		return true
	}
	switch label(scheduling.LabelInstanceCategory) {
	case "c", "m", "r":
	default:
		return false
	}
	gen, err := strconv.Atoi(label(scheduling.LabelInstanceGeneration))
	return err == nil && gen >= 5 && gen <= 7
}

// generateSampleCatalog builds the sample from moto's us-east-1 instance types and the shipped
// on-demand price table (spot prices start at on-demand until refreshed), for the default AL2023 node
// class in three zones.
func generateSampleCatalog(t *testing.T) ([]byte, []*scheduling.InstanceType) {
	t.Helper()
	moto := awstest.Shared(t)
	cat, err := instancetypes.Discover(context.Background(), ec2.NewFromConfig(moto.Config()))
	require.NoError(t, err)
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	types, _, err := cat.Build(scheduling.NodeClassConfig{}, prices, sampleZones)
	require.NoError(t, err)
	var kept []*scheduling.InstanceType
	for _, it := range types {
		if inSample(it) {
			kept = append(kept, it)
		}
	}
	var buf bytes.Buffer
	require.NoError(t, provisioning.WriteCatalog(&buf, provisioning.CatalogFrom(kept)))
	return buf.Bytes(), kept
}

func TestSampleCatalogMatchesMoto(t *testing.T) {
	got, types := generateSampleCatalog(t)
	if *update {
		require.NoError(t, os.WriteFile(sampleCatalog, got, 0o644))
	}
	want, err := os.ReadFile(sampleCatalog)
	require.NoError(t, err, "run go test ./cmd/nodewright -run TestSampleCatalogMatchesMoto -update")
	assert.Less(t, len(want), 1<<20, "the sample catalog should stay under 1 MB")
	assert.True(t, bytes.Equal(want, got), "%s differs from what moto yields now; rerun with -update", sampleCatalog)

	// The file describes the types exactly: reading it back yields what the catalog built.
	f, err := provisioning.ReadCatalog(sampleCatalog, bytes.NewReader(got))
	require.NoError(t, err)
	back, err := f.Build(scheduling.NodeClassConfig{})
	require.NoError(t, err)
	require.Len(t, back, len(types))
	assert.Greater(t, len(types), 400, "c, m and r generations 5-7 and g5")
	for i := range types {
		assert.Equal(t, types[i], back[i], types[i].Name)
	}
}
