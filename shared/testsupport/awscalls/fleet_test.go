package awscalls_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// TestRecordsACreateFleetAsEC2AuthorisesIt: an instant fleet from a tagged launch template is recorded as
// CreateFleet and RunInstances on what it creates (with the request's and the template's tags), on the
// template (with its real tags), image, subnet and security group, as tag-on-create, and as passing the
// role of the template's instance profile.
func TestRecordsACreateFleetAsEC2AuthorisesIt(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(awscalls.EnvDir, dir)
	ctx := context.Background()
	plain := awstest.Shared(t).Config()
	e, i := ec2.NewFromConfig(plain), iam.NewFromConfig(plain)

	vpc, err := e.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	require.NoError(t, err)
	subnet, err := e.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String("10.0.0.0/24"), AvailabilityZone: aws.String("us-east-1a")})
	require.NoError(t, err)
	sg, err := e.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nodes"), Description: aws.String("nodes"), VpcId: vpc.Vpc.VpcId})
	require.NoError(t, err)
	images, err := e.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	require.NoError(t, err)
	image := aws.ToString(images.Images[0].ImageId)
	_, err = i.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("node"), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
	require.NoError(t, err)
	_, err = i.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("nodes")})
	require.NoError(t, err)
	_, err = i.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("nodes"), RoleName: aws.String("node")})
	require.NoError(t, err)
	owned := []ec2types.Tag{{Key: aws.String("nodewright.sh/cluster"), Value: aws.String("prod")}}
	lt, err := e.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("nodes"),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: owned}},
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(image), SecurityGroupIds: []string{aws.ToString(sg.GroupId)},
			IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("nodes")},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeNetworkInterface,
				Tags: []ec2types.Tag{{Key: aws.String("nodewright.sh/cluster"), Value: aws.String("prod")}}}}}})
	require.NoError(t, err)
	ltID := aws.ToString(lt.LaunchTemplate.LaunchTemplateId)

	d := awscalls.Deployment{Cluster: "prod", Account: awstest.AccountID, Manifests: awscalls.SampleManifests}
	_, err = ec2.NewFromConfig(awscalls.Instrument(plain, d, "provisioner")).CreateFleet(ctx, &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String("nodes"), Version: aws.String("$Latest")},
			Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: ec2types.InstanceTypeM5Large, SubnetId: subnet.Subnet.SubnetId}},
		}},
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1),
			DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: owned},
			{ResourceType: ec2types.ResourceTypeFleet, Tags: owned}},
	})
	require.NoError(t, err)

	calls, err := awscalls.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, calls, 1)
	var got []string
	for _, c := range calls[0].Checks {
		got = append(got, c.String())
	}
	arn := func(kind, id string) string { return "arn:aws:ec2:us-east-1:123456789012:" + kind + "/" + id }
	tags := " [aws:RequestTag/nodewright.sh/cluster=prod aws:TagKeys=nodewright.sh/cluster]"
	want := []string{"iam:PassRole on arn:aws:iam::123456789012:role/node [iam:PassedToService=ec2.amazonaws.com]"}
	for _, action := range []string{"ec2:CreateFleet", "ec2:RunInstances"} {
		if action == "ec2:CreateFleet" {
			want = append(want, action+" on "+arn("fleet", "*")+tags)
		}
		want = append(want, action+" on "+arn("instance", "*")+tags, action+" on "+arn("volume", "*"),
			action+" on "+arn("network-interface", "*")+tags,
			action+" on "+arn("launch-template", ltID)+" [aws:ResourceTag/nodewright.sh/cluster=prod]",
			action+" on "+arn("subnet", aws.ToString(subnet.Subnet.SubnetId)),
			action+" on arn:aws:ec2:us-east-1::image/"+image,
			action+" on "+arn("security-group", aws.ToString(sg.GroupId)))
	}
	for _, kind := range []string{"fleet", "instance", "network-interface"} {
		want = append(want, "ec2:CreateTags on "+arn(kind, "*")+strings.Replace(tags, "]", " ec2:CreateAction=CreateFleet]", 1))
	}
	assert.Equal(t, want, got)
}
