package e2e

import (
	"context"
	"encoding/base64"
	"net/netip"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// addIPv6 gives the world's VPC an Amazon-provided IPv6 block and each discovery subnet a /64 of it, as
// the subnets of an IPv6 EKS cluster have.
func (w awsWorld) addIPv6(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	subnets, err := w.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{cluster}}}})
	require.NoError(t, err)
	require.NotEmpty(t, subnets.Subnets)
	vpc, err := w.ec2.AssociateVpcCidrBlock(ctx, &ec2.AssociateVpcCidrBlockInput{VpcId: subnets.Subnets[0].VpcId,
		AmazonProvidedIpv6CidrBlock: aws.Bool(true)})
	require.NoError(t, err)
	block := aws.ToString(vpc.Ipv6CidrBlockAssociation.Ipv6CidrBlock)
	require.NotEmpty(t, block)
	for i, s := range subnets.Subnets {
		_, err := w.ec2.AssociateSubnetCidrBlock(ctx, &ec2.AssociateSubnetCidrBlockInput{SubnetId: s.SubnetId,
			Ipv6CidrBlock: aws.String(subnet64(t, block, i))})
		require.NoError(t, err)
	}
}

// subnet64 is the i-th /64 of the /56 block.
func subnet64(t *testing.T, block string, i int) string {
	t.Helper()
	prefix, err := netip.ParsePrefix(block)
	require.NoError(t, err)
	require.Equal(t, 56, prefix.Bits(), "EC2 gives a VPC a /56")
	a := prefix.Masked().Addr().As16()
	a[7] = byte(i)
	return netip.PrefixFrom(netip.AddrFrom16(a), 64).String()
}

// TestProvisionerLaunchesOnAnIPv6Cluster runs the provisioner as functions/provisioner does on an IPv6
// cluster: the join data comes from the cluster as EKS describes it (NodeJoin, which NewOnAWS uses), the
// pods are pending on the local control plane, and the launch goes through moto's EC2. The instances are
// launched, and the launch template they came from carries the IPv6 service range and DNS address in its
// nodeadm NodeConfig and gives the node a primary IPv6 address (moto 5.2.1's CreateFleet does not assign
// it, so the template is what is checked, not the instance); max pods stays the ENI-based count, as
// Karpenter keeps it on IPv6.
func TestProvisionerLaunchesOnAnIPv6Cluster(t *testing.T) {
	w := newAWSWorld(t)
	w.addIPv6(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	createPendingPods(t, cp.Client, ns, 3)
	join, err := provisioning.NodeJoin(kube.Cluster{Name: cluster, Endpoint: "https://demo.example.com", CA: testCA, Version: "1.34",
		IPFamily: kube.IPv6, ServiceCIDR: "fd7e:15a9:8c2b::/108"})
	require.NoError(t, err)
	p := newProvisionerJoining(t, w, cp, ns, join, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	rep, err := p.Run(ctx, "run-ipv6")
	require.NoError(t, err)
	assert.Equal(t, 3, rep.PendingPods)
	assert.Empty(t, rep.Errors)
	require.NotEmpty(t, rep.Claims)
	instances := w.claimedInstances(t)
	require.Len(t, instances, len(rep.Claims), "one instance per launched claim")

	out, err := w.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	require.NoError(t, err)
	require.NotEmpty(t, out.LaunchTemplates)
	for _, lt := range out.LaunchTemplates {
		versions, err := w.ec2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: lt.LaunchTemplateId})
		require.NoError(t, err)
		for _, v := range versions.LaunchTemplateVersions {
			data := v.LaunchTemplateData
			raw, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
			require.NoError(t, err)
			parts, err := launchtemplate.ParseMIME(string(raw))
			require.NoError(t, err)
			var cfg launchtemplate.NodeConfig
			for _, part := range parts {
				if part.ContentType() == launchtemplate.ContentTypeNodeConfig {
					require.NoError(t, yaml.Unmarshal([]byte(part.Body), &cfg))
				}
			}
			assert.Equal(t, "fd7e:15a9:8c2b::/108", cfg.Spec.Cluster.CIDR, "nodeadm's cluster.cidr is the IPv6 service range")
			assert.JSONEq(t, `["fd7e:15a9:8c2b::a"]`, string(cfg.Spec.Kubelet.Config["clusterDNS"]), "the kubelet's DNS is the IPv6 kube-dns address")
			assert.NotContains(t, cfg.Spec.Kubelet.Config, "maxPods",
				"as on IPv4, max pods is the AMI's ENI-based count, the density the scheduler assumed")
			require.Len(t, data.NetworkInterfaces, 1)
			assert.Equal(t, int32(1), aws.ToInt32(data.NetworkInterfaces[0].Ipv6AddressCount))
			assert.True(t, aws.ToBool(data.NetworkInterfaces[0].PrimaryIpv6))
		}
	}
}
