package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
)

const sampleTable = `{"currency": "USD per hour",
 "types": ["a1.large", "gone.large", "m5.large"],
 "regions": {"us-east-1": {"source": "karpenter", "generatedAt": "2026-07-20T13:44:30Z", "prices": [0.051, 0, 0.096]},
             "us-east-2": {"source": "old", "generatedAt": "2020-01-01T00:00:00Z", "prices": [0, 1, 0.5]}}}`

func writeInputs(t *testing.T) (table, instances string) {
	dir := t.TempDir()
	table, instances = filepath.Join(dir, "on-demand.json"), filepath.Join(dir, "instances.json")
	require.NoError(t, os.WriteFile(table, []byte(sampleTable), 0o644))
	require.NoError(t, os.WriteFile(instances, []byte(sampleInstances), 0o644))
	return table, instances
}

func TestRunReplacesNamedRegionsAndKeepsTheRest(t *testing.T) {
	table, instances := writeInputs(t)
	var log strings.Builder
	require.NoError(t, run([]string{"-instances", instances, "-table", table, "-regions", "us-east-2, eu-west-1",
		"-source", "ec2-instances-info@v1", "-generated-at", "2025-04-24T13:17:44Z"}, &log))
	assert.Contains(t, log.String(), "us-east-2: 2 types (skipped: 1 not offered, 1 previous generation, 1 Mac, 1 without a price)")

	raw, err := os.ReadFile(table)
	require.NoError(t, err)
	got, err := pricing.ParseStatic(raw)
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"m5.large": 0.096, "a1.large": 0.051}, got.Regions["us-east-1"], "regions not named are kept")
	assert.Equal(t, pricing.RegionSource{Source: "karpenter", GeneratedAt: "2026-07-20T13:44:30Z"}, got.Sources["us-east-1"])
	assert.Equal(t, map[string]float64{"m5.large": 0.096, "m7g.large": 0.0816}, got.Regions["us-east-2"], "a named region is replaced whole")
	assert.Equal(t, map[string]float64{"m5.large": 0.107}, got.Regions["eu-west-1"])
	assert.Equal(t, pricing.RegionSource{Source: "ec2-instances-info@v1", GeneratedAt: "2025-04-24T13:17:44Z"}, got.Sources["eu-west-1"])
	assert.True(t, strings.HasPrefix(string(raw), "{\n\"currency\": \"USD per hour\",\n\"types\": [\n\"a1.large\",\n\"m5.large\",\n"),
		"one type name per line, and gone.large, priced nowhere any more, is dropped")

	// A second run over its own output changes nothing.
	require.NoError(t, run([]string{"-instances", instances, "-table", table, "-regions", "us-east-2,eu-west-1",
		"-source", "ec2-instances-info@v1", "-generated-at", "2025-04-24T13:17:44Z"}, io.Discard))
	again, err := os.ReadFile(table)
	require.NoError(t, err)
	assert.Equal(t, string(raw), string(again))
}

func TestRunRejectsBadFlagsAndLeavesTheTable(t *testing.T) {
	table, instances := writeInputs(t)
	ok := []string{"-instances", instances, "-table", table, "-source", "s", "-generated-at", "2025-04-24T13:17:44Z"}
	cases := map[string]struct {
		args []string
		want string
	}{
		"no instances":   {[]string{"-table", table, "-source", "s", "-generated-at", "2025-04-24T13:17:44Z"}, "-instances: required"},
		"no source":      {[]string{"-instances", instances, "-table", table, "-generated-at", "2025-04-24T13:17:44Z"}, "-source: required"},
		"bad date":       {[]string{"-instances", instances, "-table", table, "-source", "s", "-generated-at", "April 2025"}, `-generated-at: "April 2025" is not an RFC 3339 time`},
		"no regions":     {append(ok, "-regions", " , "), "-regions: names no region"},
		"missing file":   {[]string{"-instances", instances + ".missing", "-table", table, "-source", "s", "-generated-at", "2025-04-24T13:17:44Z"}, "reading -instances"},
		"unknown region": {append(ok, "-regions", "us-east-9"), "region us-east-9: no current-generation"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := run(tc.args, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			raw, err := os.ReadFile(table)
			require.NoError(t, err)
			assert.Equal(t, sampleTable, string(raw))
		})
	}
}

func TestRunRefusesAnInvalidTable(t *testing.T) {
	table, instances := writeInputs(t)
	require.NoError(t, os.WriteFile(table, []byte(`{"currency": "USD", "types": ["m5.large"], "regions": {"us-east-1": {"prices": [0.096]}}}`), 0o644))
	err := run([]string{"-instances", instances, "-table", table, "-source", "s", "-generated-at", "2025-04-24T13:17:44Z"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sources.us-east-1.source: empty")
}

// partitions prices one type in commercial regions, a Local Zone, a Wavelength Zone, GovCloud and China.
const partitions = `[{"instance_type": "m5.large", "generation": "current", "pricing": {
 "us-east-1": {"linux": {"ondemand": "0.096"}}, "ap-southeast-7": {"linux": {"ondemand": "0.12"}},
 "eu-west-1": {"linux": {"ondemand": "0.107"}}, "us-east-1-bos-1": {"linux": {"ondemand": "0.115"}},
 "us-west-2-wl1-las1": {"linux": {"ondemand": "0.12"}}, "us-gov-west-1": {"linux": {"ondemand": "0.12"}},
 "cn-north-1": {"linux": {"ondemand": "0.9"}}}}]`

func TestRunTakesEveryCommercialRegionByDefaultAndKeepsUSEast1(t *testing.T) {
	table, instances := writeInputs(t)
	require.NoError(t, os.WriteFile(instances, []byte(partitions), 0o644))
	var log strings.Builder
	require.NoError(t, run([]string{"-instances", instances, "-table", table, "-source", "s", "-generated-at", "2025-04-24T13:17:44Z"}, &log))
	assert.Contains(t, log.String(), "us-east-1: kept as it is (-keep)")
	raw, err := os.ReadFile(table)
	require.NoError(t, err)
	got, err := pricing.ParseStatic(raw)
	require.NoError(t, err)
	assert.Equal(t, []string{"ap-southeast-7", "eu-west-1", "us-east-1", "us-east-2"}, got.StaticRegions(),
		"commercial regions only; us-east-2, not in the data, is kept")
	assert.Equal(t, map[string]float64{"m5.large": 0.096, "a1.large": 0.051}, got.Regions["us-east-1"])
	assert.Equal(t, map[string]float64{"m5.large": 0.12}, got.Regions["ap-southeast-7"])
}
