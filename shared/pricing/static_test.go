package pricing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStaticTableCoversFourRegionsWithKnownPrices(t *testing.T) {
	table, err := LoadStatic()
	require.NoError(t, err)
	assert.Equal(t, []string{"eu-west-1", "us-east-1", "us-east-2", "us-west-2"}, table.StaticRegions())

	// Well-known list prices; a price far outside its band means the wrong column or region was read.
	known := map[string]map[string]float64{
		"us-east-1": {"m5.large": 0.096, "m7g.large": 0.0816, "c6g.large": 0.068, "t3.micro": 0.0104},
		"us-east-2": {"m5.large": 0.096, "m7g.large": 0.0816, "c6g.large": 0.068, "t3.micro": 0.0104},
		"us-west-2": {"m5.large": 0.096, "m7g.large": 0.0816, "c6g.large": 0.068, "t3.micro": 0.0104},
		"eu-west-1": {"m5.large": 0.107, "m7g.large": 0.091, "c6g.large": 0.073, "t3.micro": 0.0114},
	}
	for region, want := range known {
		t.Run(region, func(t *testing.T) {
			prices := table.Regions[region]
			assert.Greater(t, len(prices), 500, "hundreds of instance types")
			for name, price := range want {
				got, ok := prices[name]
				if assert.True(t, ok, name) {
					assert.InDelta(t, price, got, price*0.05, name)
				}
			}
			// Both architectures: Graviton (…g families) and x86 (Intel and AMD).
			for _, name := range []string{"m6g.large", "c7g.xlarge", "r6g.large", "m6i.large", "c5.large", "m6a.large"} {
				assert.Contains(t, prices, name)
			}
			for name, price := range prices {
				assert.Positive(t, price, name)
				assert.Less(t, price, 500.0, name)
			}
			src := table.Sources[region]
			assert.NotEmpty(t, src.Source)
			assert.NotEmpty(t, src.GeneratedAt)
		})
	}
	assert.Equal(t, "2026-07-20T13:44:30Z", table.Sources["us-east-1"].GeneratedAt)
	assert.Contains(t, table.Sources["us-east-1"].Source, "karpenter-provider-aws")
	assert.Greater(t, len(table.Regions["us-east-1"]), 1000)
	for _, region := range []string{"us-east-2", "us-west-2", "eu-west-1"} {
		assert.Contains(t, table.Sources[region].Source, "github.com/cristim/ec2-instances-info@v0.0.0-20250528091325-32acf84f42eb")
		assert.Equal(t, "2025-04-24T13:17:44Z", table.Sources[region].GeneratedAt)
	}
}

func TestParseStaticNamesTheBadField(t *testing.T) {
	cases := map[string]struct {
		json string
		want string
	}{
		"not json":          {`{`, "unexpected end"},
		"no currency":       {`{"sources":{"r":{"source":"s","generatedAt":"d"}},"regions":{"r":{"a.large":1}}}`, "currency: missing"},
		"no regions":        {`{"currency":"USD"}`, "regions: no region has prices"},
		"empty region":      {`{"currency":"USD","sources":{"r":{"source":"s","generatedAt":"d"}},"regions":{"r":{}}}`, "regions.r: no prices"},
		"zero price":        {`{"currency":"USD","sources":{"r":{"source":"s","generatedAt":"d"}},"regions":{"r":{"a.large":0}}}`, "regions.r.a.large: price 0 is not above zero"},
		"no source":         {`{"currency":"USD","regions":{"r":{"a.large":1}}}`, "sources.r: missing"},
		"empty source":      {`{"currency":"USD","sources":{"r":{"generatedAt":"d"}},"regions":{"r":{"a.large":1}}}`, "sources.r.source: empty"},
		"no date":           {`{"currency":"USD","sources":{"r":{"source":"s"}},"regions":{"r":{"a.large":1}}}`, "sources.r.generatedAt: empty"},
		"source, no prices": {`{"currency":"USD","sources":{"r":{"source":"s","generatedAt":"d"},"x":{"source":"s","generatedAt":"d"}},"regions":{"r":{"a.large":1}}}`, "sources.x: no prices"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseStatic([]byte(tc.json))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	table, err := ParseStatic([]byte(`{"currency":"USD","sources":{"r":{"source":"s","generatedAt":"d"}},"regions":{"r":{"a.large":1}}}`))
	require.NoError(t, err)
	assert.Equal(t, 1.0, table.Regions["r"]["a.large"])
}
