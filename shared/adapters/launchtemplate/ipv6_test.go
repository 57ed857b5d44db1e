package launchtemplate

import (
	"encoding/base64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// ipv6Options are testOptions on an IPv6 cluster: EKS's IPv6 service range and the DNS address in it.
func ipv6Options(family string) Options {
	o := testOptions(family)
	o.Cluster.IPFamily = IPv6
	o.Cluster.ServiceCIDR = "fd7e:15a9:8c2b::/108"
	o.Cluster.DNSIP = "fd7e:15a9:8c2b::a"
	return o
}

func TestAL2023OnAnIPv6Cluster(t *testing.T) {
	out, err := UserData(ipv6Options(apis.AMIFamilyAL2023))
	require.NoError(t, err)
	spec := decodeNodeConfig(t, out)["spec"].(map[string]any)
	assert.Equal(t, "fd7e:15a9:8c2b::/108", spec["cluster"].(map[string]any)["cidr"], "nodeadm's cluster.cidr is the IPv6 service range")
	config := spec["kubelet"].(map[string]any)["config"].(map[string]any)
	assert.Equal(t, []any{"fd7e:15a9:8c2b::a"}, config["clusterDNS"])
	assert.Equal(t, 58.0, config["maxPods"], "the resolved max pods, as on IPv4")
}

func TestAL2OnAnIPv6Cluster(t *testing.T) {
	out, err := UserData(ipv6Options(apis.AMIFamilyAL2))
	require.NoError(t, err)
	parts, err := ParseMIME(out)
	require.NoError(t, err)
	script := parts[len(parts)-1].Body
	assert.Contains(t, script, "--ip-family ipv6")
	assert.Contains(t, script, "--service-ipv6-cidr 'fd7e:15a9:8c2b::/108'")
	assert.Contains(t, script, "--dns-cluster-ip 'fd7e:15a9:8c2b::a'")
	assert.Contains(t, script, "--use-max-pods false", "bootstrap.sh does not replace the resolved max pods with its own")
	assert.Contains(t, script, "--max-pods=58")

	ipv4, err := UserData(testOptions(apis.AMIFamilyAL2))
	require.NoError(t, err)
	assert.NotContains(t, ipv4, "--ip-family")
	assert.NotContains(t, ipv4, "--service-ipv6-cidr")
}

func TestAL2OnAnIPv6ClusterKnownByItsServiceRange(t *testing.T) {
	o := ipv6Options(apis.AMIFamilyAL2)
	o.Cluster.IPFamily = ""
	out, err := UserData(o)
	require.NoError(t, err)
	assert.Contains(t, out, "--ip-family ipv6", "an unset family follows the service range")
}

func TestBottlerocketOnAnIPv6Cluster(t *testing.T) {
	out, err := UserData(ipv6Options(apis.AMIFamilyBottlerocket))
	require.NoError(t, err)
	root, err := parseTOML(out)
	require.NoError(t, err)
	kube := root["settings"].(tomlTable)["kubernetes"].(tomlTable)
	assert.Equal(t, "fd7e:15a9:8c2b::a", kube["cluster-dns-ip"])
	assert.Equal(t, int64(58), kube["max-pods"])
}

func TestCustomUserDataOnAnIPv6ClusterIsPassedThrough(t *testing.T) {
	o := ipv6Options(apis.AMIFamilyCustom)
	o.UserData = "#!/bin/bash\n/opt/join.sh\n"
	out, err := UserData(o)
	require.NoError(t, err)
	assert.Equal(t, o.UserData, out)
}

func TestClusterFamilyMismatchIsRefused(t *testing.T) {
	for name, mutate := range map[string]func(*Cluster){
		"IPv4 service range on an IPv6 cluster": func(c *Cluster) { c.ServiceCIDR = "10.100.0.0/16" },
		"IPv4 DNS address on an IPv6 cluster":   func(c *Cluster) { c.DNSIP = "10.100.0.10" },
		"unknown family":                        func(c *Cluster) { c.IPFamily = "dual" },
	} {
		for _, family := range []string{apis.AMIFamilyAL2023, apis.AMIFamilyAL2, apis.AMIFamilyBottlerocket} {
			o := ipv6Options(family)
			mutate(&o.Cluster)
			_, err := UserData(o)
			assert.Error(t, err, "%s, %s", name, family)
		}
	}
}

func TestDataOnAnIPv6ClusterGivesTheNodeAnIPv6Address(t *testing.T) {
	tmpl := testTemplate(func(s *apis.EC2NodeClassSpec) { s.IPPrefixCount = aws.Int32(2) })
	tmpl.Options = ipv6Options("")
	data, err := Data(tmpl)
	require.NoError(t, err)
	assert.Nil(t, data.SecurityGroupIds, "the groups go in the interface")
	require.Len(t, data.NetworkInterfaces, 1)
	ni := data.NetworkInterfaces[0]
	assert.Equal(t, int32(0), aws.ToInt32(ni.DeviceIndex))
	assert.Equal(t, []string{"sg-1", "sg-2"}, ni.Groups)
	assert.Equal(t, int32(1), aws.ToInt32(ni.Ipv6AddressCount))
	assert.True(t, aws.ToBool(ni.PrimaryIpv6))
	assert.Equal(t, int32(2), aws.ToInt32(ni.Ipv6PrefixCount), "ipPrefixCount counts IPv6 prefixes")
	assert.Nil(t, ni.Ipv4PrefixCount)
	userData, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
	require.NoError(t, err)
	assert.Contains(t, string(userData), "cidr: fd7e:15a9:8c2b::/108")

	ipv4, err := Data(testTemplate(nil))
	require.NoError(t, err)
	assert.Nil(t, ipv4.NetworkInterfaces, "an IPv4 cluster's template is unchanged")
	assert.Equal(t, []string{"sg-1", "sg-2"}, ipv4.SecurityGroupIds)
}
