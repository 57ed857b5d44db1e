package pricing

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commercialRegions are the AWS commercial regions ec2instances.info priced when the table was generated;
// the shipped table must cover every one of them.
var commercialRegions = []string{"af-south-1", "ap-east-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
	"ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-southeast-4", "ap-southeast-5",
	"ap-southeast-7", "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2", "eu-north-1", "eu-south-1",
	"eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3", "il-central-1", "me-central-1", "me-south-1", "mx-central-1",
	"sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2"}

func TestStaticTableCoversEveryCommercialRegion(t *testing.T) {
	table, err := LoadStatic()
	require.NoError(t, err)
	var commercial []string
	for _, r := range table.StaticRegions() {
		if Partition(r) == PartitionAWS {
			commercial = append(commercial, r)
		}
	}
	assert.Equal(t, commercialRegions, commercial, "no Local Zones")
	assert.Less(t, len(staticTable), 300_000, "the embedded file stays compact")

	// Well-known list prices; a price far outside its band means the wrong column or region was read.
	known := map[string]map[string]float64{
		"us-east-1":      {"m5.large": 0.096, "m7g.large": 0.0816, "c6g.large": 0.068, "t3.micro": 0.0104},
		"us-east-2":      {"m5.large": 0.096, "m7g.large": 0.0816, "c6g.large": 0.068, "t3.micro": 0.0104},
		"us-west-2":      {"m5.large": 0.096, "m7g.large": 0.0816, "c6g.large": 0.068, "t3.micro": 0.0104},
		"eu-west-1":      {"m5.large": 0.107, "m7g.large": 0.091, "c6g.large": 0.073, "t3.micro": 0.0114},
		"eu-central-1":   {"m5.large": 0.115, "t3.micro": 0.012},
		"ap-northeast-1": {"m5.large": 0.124, "t3.micro": 0.0136},
		"sa-east-1":      {"m5.large": 0.153, "t3.micro": 0.0168},
	}
	for _, region := range commercialRegions {
		t.Run(region, func(t *testing.T) {
			prices := table.Regions[region]
			assert.Greater(t, len(prices), 150, "every region prices at least the common families")
			for name, price := range known[region] {
				got, ok := prices[name]
				if assert.True(t, ok, name) {
					assert.InDelta(t, price, got, price*0.05, name)
				}
			}
			// The common burstable x86 and Graviton types are offered everywhere.
			for _, name := range []string{"t3.micro", "t3.large", "m6g.large", "c6g.large", "r6g.large"} {
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
	assert.Greater(t, len(table.Regions["us-east-1"]), 1000)
	for _, region := range []string{"us-east-2", "us-west-2", "eu-west-1"} {
		assert.Greater(t, len(table.Regions[region]), 700, region)
	}
	assert.Equal(t, "2026-07-20T13:44:30Z", table.Sources["us-east-1"].GeneratedAt)
	assert.Contains(t, table.Sources["us-east-1"].Source, "karpenter-provider-aws")
	for _, region := range commercialRegions {
		if region == "us-east-1" {
			continue
		}
		assert.Contains(t, table.Sources[region].Source, "github.com/cristim/ec2-instances-info@v0.0.0-20250528091325-32acf84f42eb", region)
		assert.Equal(t, "2025-04-24T13:17:44Z", table.Sources[region].GeneratedAt, region)
	}
}

func TestStaticTableCoversGovCloudAndChinaInTheirCurrencies(t *testing.T) {
	table, err := LoadStatic()
	require.NoError(t, err)
	for region, want := range map[string]struct {
		currency string
		m5large  float64
		types    int
	}{
		"us-gov-west-1": {"USD per hour", 0.121, 500},
		"us-gov-east-1": {"USD per hour", 0.121, 350},
		"cn-north-1":    {"CNY per hour", 1.013, 300},
	} {
		t.Run(region, func(t *testing.T) {
			assert.Equal(t, want.currency, table.CurrencyOf(region))
			assert.InDelta(t, want.m5large, table.Regions[region]["m5.large"], 1e-9, "the partition's own list price")
			assert.Greater(t, len(table.Regions[region]), want.types)
			assert.NotEmpty(t, table.Sources[region].Source)
		})
	}
	assert.Equal(t, "USD per hour", table.CurrencyOf("us-east-1"))
	assert.Contains(t, table.Sources["cn-north-1"].Source, "zz_generated.pricing_aws_cn.go")
	assert.Contains(t, table.Sources["us-gov-west-1"].Source, "github.com/cristim/ec2-instances-info@v0.0.0-20250528091325-32acf84f42eb")

	bad := `{"currency":"USD per hour","types":["a.large"],"regions":{"cn-north-1":{"source":"s","generatedAt":"d","prices":[1]}}}`
	_, err = ParseStatic([]byte(bad))
	assert.ErrorContains(t, err, `sources.cn-north-1.currency: "USD per hour", but cn-north-1's list prices are in CNY`)
	bad = `{"currency":"USD per hour","types":["a.large"],"regions":{"eu-west-1":{"source":"s","generatedAt":"d","currency":"CNY per hour","prices":[1]}}}`
	_, err = ParseStatic([]byte(bad))
	assert.ErrorContains(t, err, `sources.eu-west-1.currency: "CNY per hour", but eu-west-1's list prices are in USD`)
}

func TestEncodeStaticRoundTrips(t *testing.T) {
	table, err := LoadStatic()
	require.NoError(t, err)
	out, err := EncodeStatic(table)
	require.NoError(t, err)
	assert.Equal(t, string(staticTable), string(out), "the shipped file is what the generator writes")
	_, err = EncodeStatic(StaticTable{Currency: "USD", Sources: map[string]RegionSource{"r": {Source: "s", GeneratedAt: "d"}},
		Regions: map[string]map[string]float64{"r": {"a.large": math.Inf(1)}}})
	assert.ErrorContains(t, err, "regions.r.a.large: price +Inf is not a finite price above zero")
}

func TestParseStaticNamesTheBadField(t *testing.T) {
	const src = `"source":"s","generatedAt":"d"`
	cases := map[string]struct {
		json string
		want string
	}{
		"not json":         {`{`, "unexpected end"},
		"no currency":      {`{"types":["a.large"],"regions":{"r":{` + src + `,"prices":[1]}}}`, "currency: missing"},
		"no regions":       {`{"currency":"USD"}`, "regions: no region has prices"},
		"empty region":     {`{"currency":"USD","types":["a.large"],"regions":{"r":{` + src + `,"prices":[0]}}}`, "regions.r: no prices"},
		"negative price":   {`{"currency":"USD","types":["a.large"],"regions":{"r":{` + src + `,"prices":[-1]}}}`, "regions.r.prices[0] (a.large): price -1 is negative"},
		"short prices":     {`{"currency":"USD","types":["a.large","b.large"],"regions":{"r":{` + src + `,"prices":[1]}}}`, "regions.r.prices: 1 prices for 2 types"},
		"type twice":       {`{"currency":"USD","types":["a.large","a.large"],"regions":{"r":{` + src + `,"prices":[1,1]}}}`, "types[1]: a.large is listed twice"},
		"empty type":       {`{"currency":"USD","types":[""],"regions":{"r":{` + src + `,"prices":[1]}}}`, "types[0]: empty instance type name"},
		"empty source":     {`{"currency":"USD","types":["a.large"],"regions":{"r":{"generatedAt":"d","prices":[1]}}}`, "sources.r.source: empty"},
		"no date":          {`{"currency":"USD","types":["a.large"],"regions":{"r":{"source":"s","prices":[1]}}}`, "sources.r.generatedAt: empty"},
		"price not number": {`{"currency":"USD","types":["a.large"],"regions":{"r":{` + src + `,"prices":["1"]}}}`, "cannot unmarshal string"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseStatic([]byte(tc.json))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	table, err := ParseStatic([]byte(`{"currency":"USD","types":["a.large","b.large"],"regions":{"r":{` + src + `,"prices":[1,0]}}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"a.large": 1}, table.Regions["r"], "0 is a type the region does not offer")
}
