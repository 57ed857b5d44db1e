package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/testenv"
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
}

// An IPv6 cluster's DNS address is its service prefix's base address plus 0xa, as EKS gives kube-dns
// and the EKS AMI's bootstrap.sh computes it (the prefix's text with "a" appended).
func TestDNSIPOfAnIPv6ServiceRange(t *testing.T) {
	for _, tc := range []struct{ family, cidr, want string }{
		{IPv6, "fd00::/108", "fd00::a"},
		{IPv6, "fd7e:15a9:8c2b::/108", "fd7e:15a9:8c2b::a"},
		{"", "fd7e:15a9:8c2b::/108", "fd7e:15a9:8c2b::a"},
		{IPv6, "fd7e:15a9:8c2b::1234/108", "fd7e:15a9:8c2b::a"},
		{IPv4, "10.100.0.0/16", "10.100.0.10"},
	} {
		got, err := Cluster{IPFamily: tc.family, ServiceCIDR: tc.cidr}.DNSIP()
		assert.NoError(t, err, tc.cidr)
		assert.Equal(t, tc.want, got, tc.cidr)
	}
	for _, bad := range []Cluster{
		{IPFamily: IPv6, ServiceCIDR: "10.100.0.0/16"},
		{IPFamily: IPv4, ServiceCIDR: "fd00::/108"},
		{IPFamily: "dual", ServiceCIDR: "fd00::/108"},
		{IPFamily: IPv6, ServiceCIDR: ""},
		{IPFamily: IPv6, ServiceCIDR: "fd00::/126"},
	} {
		_, err := bad.DNSIP()
		assert.Error(t, err, "%+v", bad)
	}
}

// moto keeps kubernetesNetworkConfig as CreateCluster sends it and assigns no IPv6 service range, which
// EKS does for an IPv6 cluster; withServiceIPv6CIDR adds the range EKS would assign to the request body,
// so DescribeCluster answers as EKS does.
func withServiceIPv6CIDR(cidr string) func(*eks.Options) {
	return func(o *eks.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Build.Add(middleware.BuildMiddlewareFunc("serviceIpv6Cidr", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				req := in.Request.(*smithyhttp.Request)
				body, err := io.ReadAll(req.GetStream())
				if err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				var doc map[string]any
				if err := json.Unmarshal(body, &doc); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				doc["kubernetesNetworkConfig"].(map[string]any)["serviceIpv6Cidr"] = cidr
				if body, err = json.Marshal(doc); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				if req, err = req.SetStream(bytes.NewReader(body)); err != nil {
					return middleware.BuildOutput{}, middleware.Metadata{}, err
				}
				req.ContentLength = int64(len(body))
				in.Request = req
				return next.HandleBuild(ctx, in)
			}), middleware.After)
		})
	}
}

func TestDescribeIPv6ClusterFromMoto(t *testing.T) {
	ctx := context.Background()
	moto, err := awstest.Start(ctx)
	if err != nil {
		testenv.Unavailable(t, "moto_server", err)
	}
	t.Cleanup(moto.Stop)
	api := eks.NewFromConfig(moto.Config())
	_, err = api.CreateCluster(ctx, &eks.CreateClusterInput{
		Name: aws.String("six"), Version: aws.String("1.34"), RoleArn: aws.String("arn:aws:iam::123456789012:role/eks"),
		ResourcesVpcConfig:      &ekstypes.VpcConfigRequest{SubnetIds: []string{"subnet-1", "subnet-2"}},
		KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigRequest{IpFamily: ekstypes.IpFamilyIpv6},
	}, withServiceIPv6CIDR("fd7e:15a9:8c2b::/108"))
	require.NoError(t, err)

	c, err := DescribeCluster(ctx, api, "six")
	require.NoError(t, err)
	assert.Equal(t, IPv6, c.IPFamily)
	assert.Equal(t, "fd7e:15a9:8c2b::/108", c.ServiceCIDR, "the IPv6 service range, not an IPv4 one")
	dns, err := c.DNSIP()
	require.NoError(t, err)
	assert.Equal(t, "fd7e:15a9:8c2b::a", dns)

	_, err = api.CreateCluster(ctx, &eks.CreateClusterInput{
		Name: aws.String("four"), Version: aws.String("1.34"), RoleArn: aws.String("arn:aws:iam::123456789012:role/eks"),
		ResourcesVpcConfig:      &ekstypes.VpcConfigRequest{SubnetIds: []string{"subnet-1", "subnet-2"}},
		KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigRequest{IpFamily: ekstypes.IpFamilyIpv4, ServiceIpv4Cidr: aws.String("10.100.0.0/16")},
	})
	require.NoError(t, err)
	c, err = DescribeCluster(ctx, api, "four")
	require.NoError(t, err)
	assert.Equal(t, IPv4, c.IPFamily)
	assert.Equal(t, "10.100.0.0/16", c.ServiceCIDR)
}
