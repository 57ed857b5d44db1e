package kube

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/awstest"
	"github.com/nodewright/nodewright/shared/testenv"
)

func TestDescribeClusterFromMoto(t *testing.T) {
	ctx := context.Background()
	moto, err := awstest.Start(ctx)
	if err != nil {
		testenv.Unavailable(t, "moto_server", err)
	}
	t.Cleanup(moto.Stop)
	api := eks.NewFromConfig(moto.Config())
	_, err = api.CreateCluster(ctx, &eks.CreateClusterInput{
		Name: aws.String("demo"), Version: aws.String("1.34"), RoleArn: aws.String("arn:aws:iam::123456789012:role/eks"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{"subnet-1", "subnet-2"}},
	})
	require.NoError(t, err)

	c, err := DescribeCluster(ctx, api, "demo")
	require.NoError(t, err)
	assert.Equal(t, "1.34", c.Version)
	assert.Regexp(t, `^https://`, c.Endpoint)
	assert.NotEmpty(t, c.CA)

	_, err = DescribeCluster(ctx, api, "missing")
	assert.True(t, IsNotFound(err), "got %v", err)
}

func TestDNSIPIsTheTenthServiceAddress(t *testing.T) {
	for cidr, want := range map[string]string{"10.100.0.0/16": "10.100.0.10", "172.20.0.0/16": "172.20.0.10", "10.96.0.0/12": "10.96.0.10"} {
		got, err := Cluster{ServiceCIDR: cidr}.DNSIP()
		assert.NoError(t, err)
		assert.Equal(t, want, got, cidr)
	}
	_, err := Cluster{ServiceCIDR: "fd00::/108"}.DNSIP()
	assert.Error(t, err)
}
