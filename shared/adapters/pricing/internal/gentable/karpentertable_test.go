package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
)

// sampleKarpenterTable has the shape of a price table generated into aws/karpenter-provider-aws.
const sampleKarpenterTable = `package pricing

// generated at 2024-11-06T01:00:11Z for cn-north-1

var InitialOnDemandPricesCN = map[string]map[ec2types.InstanceType]float64{
	"cn-north-1": {
		// c5 family
		"c5.large": 0.739000, "c5.xlarge": 1.479000,
		// m5 family
		"m5.large": 1.013000,
	},
	"cn-northwest-1": {
		"m5.large": 0.880000,
	},
}
`

func TestOnDemandFromKarpenterTableReadsEachRegion(t *testing.T) {
	prices, err := onDemandFromKarpenterTable(strings.NewReader(sampleKarpenterTable), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]float64{
		"cn-north-1":     {"c5.large": 0.739, "c5.xlarge": 1.479, "m5.large": 1.013},
		"cn-northwest-1": {"m5.large": 0.88},
	}, prices)

	_, err = onDemandFromKarpenterTable(strings.NewReader(sampleKarpenterTable), []string{"cn-north-2"})
	assert.ErrorContains(t, err, "region cn-north-2: no prices in the generated table")
	_, err = onDemandFromKarpenterTable(strings.NewReader(`"m5.large": 1.0,`), nil)
	assert.ErrorContains(t, err, "line 1: a price before any region")
}

func TestRunTakesChinaFromAKarpenterTableInCNY(t *testing.T) {
	table, _ := writeInputs(t)
	karpenter := filepath.Join(t.TempDir(), "zz_generated.pricing_aws_cn.go")
	require.NoError(t, os.WriteFile(karpenter, []byte(sampleKarpenterTable), 0o644))
	var log strings.Builder
	require.NoError(t, run([]string{"-karpenter-table", karpenter, "-table", table, "-regions", "cn-north-1", "-currency", "CNY per hour",
		"-source", "karpenter cn", "-generated-at", "2024-11-06T01:00:11Z"}, &log))
	assert.Contains(t, log.String(), "cn-north-1: 3 types")
	raw, err := os.ReadFile(table)
	require.NoError(t, err)
	got, err := pricing.ParseStatic(raw)
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"c5.large": 0.739, "c5.xlarge": 1.479, "m5.large": 1.013}, got.Regions["cn-north-1"])
	assert.Equal(t, "CNY per hour", got.CurrencyOf("cn-north-1"))
	assert.Equal(t, "USD per hour", got.CurrencyOf("us-east-2"), "other regions keep the table's currency")

	err = run([]string{"-karpenter-table", karpenter, "-table", table, "-regions", "cn-northwest-1",
		"-source", "karpenter cn", "-generated-at", "2024-11-06T01:00:11Z"}, &log)
	assert.ErrorContains(t, err, "list prices are in CNY", "China's prices labelled USD are refused")
}
