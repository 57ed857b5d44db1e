package instance

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

type network struct {
	client  *ec2.Client
	subnets map[string]string // zone → subnet id
	// image and group are the launch template's AMI and security group; vpc is the VPC's id.
	image, group, vpc string
}

// newNetwork makes a VPC with a subnet in two zones and a launch template named "lt-default".
func newNetwork(t *testing.T) network {
	t.Helper()
	ctx := context.Background()
	c := ec2.NewFromConfig(awstest.Shared(t).Config())
	vpc, err := c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.1.0.0/16")})
	require.NoError(t, err)
	n := network{client: c, subnets: map[string]string{}, vpc: aws.ToString(vpc.Vpc.VpcId)}
	for i, zone := range []string{"us-east-1a", "us-east-1b"} {
		s, err := c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, AvailabilityZone: aws.String(zone),
			CidrBlock: aws.String([]string{"10.1.1.0/24", "10.1.2.0/24"}[i])})
		require.NoError(t, err)
		n.subnets[zone] = aws.ToString(s.Subnet.SubnetId)
	}
	images, err := c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	require.NoError(t, err)
	sg, err := c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nodes"), Description: aws.String("nodes"),
		VpcId: vpc.Vpc.VpcId})
	require.NoError(t, err)
	n.image, n.group = aws.ToString(images.Images[0].ImageId), aws.ToString(sg.GroupId)
	_, err = c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("lt-default"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: images.Images[0].ImageId, SecurityGroupIds: []string{n.group}}})
	require.NoError(t, err)
	return n
}

func (n network) request(claim string) Request {
	return Request{Cluster: "demo", Claim: claim, NodePool: "default", NodeClass: "default", CapacityType: CapacityTypeSpot,
		Tags: map[string]string{"team": "platform", TagCluster: "spoofed", KarpenterTagNodePool: "spoofed"},
		Overrides: []Override{
			{InstanceType: "m5.large", Zone: "us-east-1b", SubnetID: n.subnets["us-east-1b"], LaunchTemplate: "lt-default", Price: 0.04},
			{InstanceType: "c5.large", Zone: "us-east-1a", SubnetID: n.subnets["us-east-1a"], LaunchTemplate: "lt-default", Price: 0.03},
		}}
}

func TestLaunchTagsAndAdoptsOnRetry(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	l := New(n.client, "demo")

	inst, err := l.Launch(ctx, n.request("default-x7k2p"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(inst.ID, "i-"))
	assert.Equal(t, "c5.large", inst.InstanceType, "the cheapest override goes first")
	assert.Equal(t, "us-east-1a", inst.Zone)
	assert.Equal(t, "aws:///us-east-1a/"+inst.ID, inst.ProviderID())
	assert.Equal(t, n.image, inst.ImageID, "the launch template's AMI")
	assert.Equal(t, n.subnets["us-east-1a"], inst.SubnetID, "the override's subnet")
	// Real EC2 gives the template's group; moto's fleet puts the VPC's default group instead.
	assert.Len(t, inst.SecurityGroupIDs, 1, "the instance's security groups are read")
	assert.Equal(t, map[string]string{
		"team": "platform", "kubernetes.io/cluster/demo": "owned", TagCluster: "demo",
		TagNodePool: "default", TagNodeClass: "default", TagNodeClaim: "default-x7k2p", KarpenterTagNodePool: "default",
	}, inst.Tags, "ownership tags win over a node class tag of the same key; of Karpenter's keys only the NodePool")

	// A retry of the same claim (moto ignores ClientToken) finds the instance instead of launching again.
	again, err := l.Launch(ctx, n.request("default-x7k2p"))
	require.NoError(t, err)
	assert.Equal(t, inst.ID, again.ID)
	all, err := l.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 1)

	other, err := New(n.client, "other-cluster").Launch(ctx, func() Request { r := n.request("default-x7k2p"); r.Cluster = "other-cluster"; return r }())
	require.NoError(t, err)
	assert.NotEqual(t, inst.ID, other.ID, "claims are scoped to their cluster")
	all, err = l.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 1, "List shows only this cluster's instances")

	require.NoError(t, l.Terminate(ctx, inst.ID))
	_, found, err := l.FindByClaim(ctx, "default-x7k2p")
	require.NoError(t, err)
	assert.False(t, found, "a terminated instance no longer stands for its claim")
	require.NoError(t, l.Terminate(ctx, inst.ID), "terminating twice is fine")
	require.NoError(t, l.Terminate(ctx, "i-0123456789abcdef0"), "terminating what never existed is fine")
}
