package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestCatalogExportFromMoto(t *testing.T) {
	moto := awstest.Shared(t)
	loadAWSConfig = func(context.Context, string) (aws.Config, error) {
		cfg := moto.Config()
		cfg.BaseEndpoint = nil // the command's --endpoint-url must be what points EC2 at moto
		return cfg, nil
	}
	t.Cleanup(func() { loadAWSConfig = nil })

	var out, errOut bytes.Buffer
	code := dispatch([]string{"catalog", "export", "--region", "us-east-1", "--endpoint-url", moto.Endpoint}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.True(t, strings.HasPrefix(out.String(), "[\n"), "the catalog is the JSON array 'nodewright plan' reads")

	f, err := provisioning.ReadCatalog("export", &out)
	require.NoError(t, err)
	assert.Greater(t, len(f.InstanceTypes), 1000, "hundreds of instance types")
	archs, zones, gpus := map[string]int{}, map[string]bool{}, 0
	for _, e := range f.InstanceTypes {
		archs[e.Arch]++
		for _, o := range e.Offerings {
			zones[o.Zone] = true
		}
		if e.GPUs > 0 {
			gpus++
			assert.Positive(t, e.Capacity.Extended["nvidia.com/gpu"]+e.Capacity.Extended["amd.com/gpu"]+e.Capacity.Extended["habana.ai/gaudi"], "%s lists its GPUs as a resource", e.Name)
		}
		require.NotNil(t, e.Allocatable)
		assert.Less(t, e.Allocatable.MemoryMiB, e.Capacity.MemoryMiB, e.Name)
		assert.LessOrEqual(t, e.Allocatable.CPUMillis, e.Capacity.CPUMillis, e.Name)
	}
	assert.Greater(t, archs["amd64"], 500)
	assert.Greater(t, archs["arm64"], 200)
	assert.Len(t, zones, 6, "every zone of us-east-1 in moto")
	assert.Greater(t, gpus, 40)
	assert.Contains(t, errOut.String(), "have no price")
}

func TestCatalogExportLimitsZonesBySubnetTags(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	api := ec2.NewFromConfig(moto.Config())
	vpc, err := api.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.9.0.0/16")})
	require.NoError(t, err)
	_, err = api.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String("10.9.1.0/24"), AvailabilityZone: aws.String("us-east-1c"),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: "subnet", Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/discovery"), Value: aws.String("demo")}}}}})
	require.NoError(t, err)
	loadAWSConfig = func(context.Context, string) (aws.Config, error) { return moto.Config(), nil }
	t.Cleanup(func() { loadAWSConfig = nil })

	var out, errOut bytes.Buffer
	code := dispatch([]string{"catalog", "export", "--region", "us-east-1", "--subnet-tag", "karpenter.sh/discovery=demo"}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	f, err := provisioning.ReadCatalog("export", &out)
	require.NoError(t, err)
	for _, e := range f.InstanceTypes {
		for _, o := range e.Offerings {
			require.Equal(t, "us-east-1c", o.Zone, "%s is offered outside the tagged subnets' zones", e.Name)
		}
	}

	code = dispatch([]string{"catalog", "export", "--region", "us-east-1", "--subnet-tag", "karpenter.sh/discovery=nowhere"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Equal(t, 2, dispatch([]string{"catalog"}, strings.NewReader(""), &out, &errOut))
}
