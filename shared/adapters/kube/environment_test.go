package kube

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingEKS answers DescribeCluster with a fixed cluster and counts the calls.
type countingEKS struct{ calls int }

func (f *countingEKS) DescribeCluster(_ context.Context, in *eks.DescribeClusterInput, _ ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	f.calls++
	if aws.ToString(in.Name) != "demo" {
		return nil, errors.New("unexpected cluster " + aws.ToString(in.Name))
	}
	return &eks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{Name: in.Name, Endpoint: aws.String("https://eks"), Version: aws.String("1.34"),
		CertificateAuthority:    &ekstypes.Certificate{Data: aws.String("Q0E=")},
		KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigResponse{ServiceIpv4Cidr: aws.String("10.100.0.0/16")}}}, nil
}

func TestClusterFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	ctx := context.Background()

	api := &countingEKS{}
	_, err := ClusterFromEnv(ctx, env(nil), api, Need{})
	assert.ErrorContains(t, err, EnvClusterName+" is required")

	c, err := ClusterFromEnv(ctx, env(map[string]string{EnvClusterName: "demo", EnvClusterEndpoint: "https://override"}), api, Need{})
	require.NoError(t, err)
	assert.Equal(t, Cluster{Name: "demo", Endpoint: "https://override", CA: "Q0E=", ServiceCIDR: "10.100.0.0/16", Version: "1.34"}, c,
		"the environment wins; EKS fills the rest")
	assert.Equal(t, 1, api.calls)

	full := map[string]string{EnvClusterName: "demo", EnvClusterEndpoint: "https://e", EnvClusterCA: "Q0E="}
	_, err = ClusterFromEnv(ctx, env(full), api, Need{})
	require.NoError(t, err)
	assert.Equal(t, 1, api.calls, "endpoint and CA set: no call")
	c, err = ClusterFromEnv(ctx, env(full), api, Need{Nodes: true})
	require.NoError(t, err)
	assert.Equal(t, 2, api.calls, "launching nodes needs the service range and version too")
	assert.Equal(t, "10.100.0.0/16", c.ServiceCIDR)
	assert.Equal(t, "https://e", c.Endpoint)
}

// ipv6EKS answers DescribeCluster as EKS does for an IPv6 cluster: ipFamily ipv6 and the service range in
// serviceIpv6Cidr.
type ipv6EKS struct{}

func (ipv6EKS) DescribeCluster(_ context.Context, in *eks.DescribeClusterInput, _ ...func(*eks.Options)) (*eks.DescribeClusterOutput, error) {
	return &eks.DescribeClusterOutput{Cluster: &ekstypes.Cluster{Name: in.Name, Endpoint: aws.String("https://eks"), Version: aws.String("1.34"),
		CertificateAuthority: &ekstypes.Certificate{Data: aws.String("Q0E=")},
		KubernetesNetworkConfig: &ekstypes.KubernetesNetworkConfigResponse{IpFamily: ekstypes.IpFamilyIpv6,
			ServiceIpv6Cidr: aws.String("fd7e:15a9:8c2b::/108")}}}, nil
}

func TestClusterFromEnvOnAnIPv6Cluster(t *testing.T) {
	ctx := context.Background()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	c, err := ClusterFromEnv(ctx, env(map[string]string{EnvClusterName: "six"}), ipv6EKS{}, Need{Nodes: true})
	require.NoError(t, err)
	assert.Equal(t, IPv6, c.Family())
	assert.Equal(t, "fd7e:15a9:8c2b::/108", c.ServiceCIDR)
	dns, err := c.DNSIP()
	require.NoError(t, err)
	assert.Equal(t, "fd7e:15a9:8c2b::a", dns)

	c, err = ClusterFromEnv(ctx, env(map[string]string{EnvClusterName: "six", EnvClusterEndpoint: "https://e", EnvClusterCA: "Q0E=",
		EnvServiceCIDR: "fd00:1::/108", EnvKubernetesVersion: "1.34"}), &countingEKS{}, Need{Nodes: true})
	require.NoError(t, err)
	assert.Equal(t, IPv6, c.Family(), "the family follows an IPv6 service CIDR set in the environment")
	dns, err = c.DNSIP()
	require.NoError(t, err)
	assert.Equal(t, "fd00:1::a", dns)

	c, err = ClusterFromEnv(ctx, env(map[string]string{EnvClusterName: "six", EnvServiceCIDR: "10.100.0.0/16"}), ipv6EKS{}, Need{Nodes: true})
	require.NoError(t, err)
	_, err = c.DNSIP()
	assert.ErrorContains(t, err, "not an ipv6 range", "an IPv4 range set for an IPv6 cluster is refused, not used")
}
