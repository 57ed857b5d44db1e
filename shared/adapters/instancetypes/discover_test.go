package instancetypes

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

func discover(t *testing.T) *Catalog {
	t.Helper()
	moto := awstest.Shared(t)
	cat, err := Discover(context.Background(), ec2.NewFromConfig(moto.Config()))
	require.NoError(t, err)
	return cat
}

func find(cat *Catalog, name string) *Type {
	for i := range cat.Types {
		if cat.Types[i].Info.Name == name {
			return &cat.Types[i]
		}
	}
	return nil
}

func TestDiscoverReadsEveryPageAndSkipsMacs(t *testing.T) {
	cat := discover(t)
	// moto's us-east-1 holds 1263 types: 8 are Macs, and some are offered in no zone.
	assert.Equal(t, 1263, len(cat.Types)+len(cat.Skipped), "every type is either in the catalog or skipped with a reason")
	macs, unoffered := 0, 0
	for name, why := range cat.Skipped {
		switch {
		case strings.Contains(why, "_mac cannot run"):
			macs++
		case strings.Contains(why, "offered in no availability zone"):
			unoffered++
		default:
			t.Errorf("%s skipped for an unexpected reason: %s", name, why)
		}
	}
	assert.Equal(t, 8, macs)
	assert.Greater(t, len(cat.Types), 1200)

	m5 := find(cat, "m5.large")
	require.NotNil(t, m5)
	assert.EqualValues(t, 2, m5.Info.VCPUs)
	assert.EqualValues(t, 8192, m5.Info.MemoryMiB)
	assert.EqualValues(t, 3, m5.Info.MaxENIs)
	assert.EqualValues(t, 10, m5.Info.IPv4PerENI)
	assert.Equal(t, []string{"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"}, m5.Zones)
	assert.True(t, m5.Spot && m5.OnDemand)

	inf1 := find(cat, "inf1.xlarge")
	require.NotNil(t, inf1)
	require.Len(t, inf1.Info.Neuron, 1)
	assert.EqualValues(t, 4, inf1.Info.Neuron[0].Cores)

	gpus := 0
	for _, ty := range cat.Types {
		if len(ty.Info.GPUs) > 0 {
			gpus++
		}
	}
	assert.Greater(t, gpus, 60, "moto lists 65 GPU types, a few of them offered in no zone")
}

func TestBuildPricesOfferingsInTheNodeClassZones(t *testing.T) {
	cat := discover(t)
	prices, err := pricing.NewProvider("us-east-1")
	require.NoError(t, err)
	types, skipped, err := cat.Build(scheduling.NodeClassConfig{}, prices, []string{"us-east-1a", "us-east-1b"})
	require.NoError(t, err)
	assert.NotEmpty(t, skipped, "types the price table does not know get no offering")
	for name, why := range skipped {
		ok := strings.Contains(why, "no priced offering") || strings.HasPrefix(name, "a1.") && strings.Contains(why, "AL2023")
		assert.True(t, ok, "%s: %s", name, why)
	}
	byName := map[string]*scheduling.InstanceType{}
	for _, it := range types {
		byName[it.Name] = it
	}
	m5 := byName["m5.large"]
	require.NotNil(t, m5)
	require.Len(t, m5.Offerings, 4, "2 zones × spot and on-demand")
	for _, o := range m5.Offerings {
		assert.Contains(t, []string{"us-east-1a", "us-east-1b"}, o.Zone)
		if o.CapacityType == scheduling.CapacityTypeOnDemand {
			assert.InDelta(t, 0.096, o.Price, 1e-9)
		}
	}
	assert.EqualValues(t, 29, m5.Allocatable.Pods, "ENI-limited: 3 × (10 − 1) + 2")
	assert.EqualValues(t, 2000, m5.Capacity.CPU)
	assert.Less(t, m5.Allocatable.Memory, m5.Capacity.Memory)
	assert.Equal(t, []string{"m"}, m5.Requirements.Get(scheduling.LabelInstanceCategory).Values())
	assert.Equal(t, []string{"5"}, m5.Requirements.Get(scheduling.LabelInstanceGeneration).Values())

	g5 := byName["g5.xlarge"]
	require.NotNil(t, g5)
	assert.EqualValues(t, 1, g5.Capacity.Extended[scheduling.ResourceNVIDIAGPU])
	assert.Equal(t, []string{"a10g"}, g5.Requirements.Get(scheduling.LabelInstanceGPUName).Values())
}
