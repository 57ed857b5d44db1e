package provisioning

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
)

var ipv6Cluster = kube.Cluster{Name: "six", Endpoint: "https://six.example.com", CA: "Q0E=", Version: "1.34",
	IPFamily: kube.IPv6, ServiceCIDR: "fd7e:15a9:8c2b::/108"}

func TestNodeJoinFollowsTheClusterIPFamily(t *testing.T) {
	join, err := NodeJoin(ipv6Cluster)
	require.NoError(t, err)
	assert.Equal(t, launchtemplate.Cluster{Name: "six", Endpoint: "https://six.example.com", CABundle: "Q0E=",
		IPFamily: launchtemplate.IPv6, ServiceCIDR: "fd7e:15a9:8c2b::/108", DNSIP: "fd7e:15a9:8c2b::a"}, join)

	join, err = NodeJoin(kube.Cluster{Name: "four", Endpoint: "https://four.example.com", CA: "Q0E=", ServiceCIDR: "10.100.0.0/16"})
	require.NoError(t, err)
	assert.Equal(t, launchtemplate.IPv4, join.IPFamily)
	assert.Equal(t, "10.100.0.10", join.DNSIP)

	_, err = NodeJoin(kube.Cluster{Name: "six", IPFamily: kube.IPv6, ServiceCIDR: "10.100.0.0/16"})
	assert.Error(t, err, "an IPv4 range on an IPv6 cluster")
}

// The provisioner and disruption functions build their provisioner with NewOnAWS; it used to refuse a
// cluster without an IPv4 service range, so neither started on an IPv6 cluster.
func TestNewOnAWSStartsOnAnIPv6Cluster(t *testing.T) {
	p, err := NewOnAWS(AWSParts{Config: aws.Config{Region: "us-east-1"}, Cluster: ipv6Cluster, Client: fake.NewClientset()})
	require.NoError(t, err)
	assert.Equal(t, "fd7e:15a9:8c2b::a", p.cfg.Cluster.DNSIP)
	assert.Equal(t, "fd7e:15a9:8c2b::/108", p.cfg.Cluster.ServiceCIDR)
}
