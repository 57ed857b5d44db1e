package launchtemplate

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// testTemplate is a template for node class "default" (alias al2023@latest) resolved in cluster "prod".
func testTemplate(mutate func(*apis.EC2NodeClassSpec)) Template {
	nc := &apis.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: apis.EC2NodeClassSpec{
			AMISelectorTerms: []apis.AMISelectorTerm{{Alias: "al2023@latest"}},
			Role:             "KarpenterNodeRole-prod",
			Tags:             map[string]string{"team": "platform", "nodewright.sh/cluster": "spoofed"},
		},
	}
	if mutate != nil {
		mutate(&nc.Spec)
	}
	return Template{
		NodeClass: nc,
		Resolved: apis.EC2NodeClassStatus{
			SecurityGroups:  []apis.SecurityGroupStatus{{ID: "sg-2"}, {ID: "sg-1"}},
			InstanceProfile: "prod_1234",
		},
		ImageID: "ami-0123456789abcdef0",
		Options: testOptions(""),
	}
}

func tagMap(tags []ec2types.Tag) map[string]string {
	m := map[string]string{}
	for _, tag := range tags {
		m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return m
}

func TestDataDefaults(t *testing.T) {
	tmpl := testTemplate(nil)
	data, err := Data(tmpl)
	require.NoError(t, err)
	assert.Equal(t, "ami-0123456789abcdef0", aws.ToString(data.ImageId))
	assert.Equal(t, "prod_1234", aws.ToString(data.IamInstanceProfile.Name))
	assert.Equal(t, []string{"sg-1", "sg-2"}, data.SecurityGroupIds)
	assert.Nil(t, data.NetworkInterfaces)
	assert.Equal(t, []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"),
		Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{Encrypted: aws.Bool(true), VolumeType: ec2types.VolumeTypeGp3, VolumeSize: aws.Int32(20)}}},
		data.BlockDeviceMappings)
	assert.Equal(t, &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
		HttpEndpoint: "enabled", HttpProtocolIpv6: "disabled", HttpPutResponseHopLimit: aws.Int32(1), HttpTokens: "required",
		InstanceMetadataTags: ec2types.LaunchTemplateInstanceMetadataTagsStateDisabled,
	}, data.MetadataOptions)
	assert.False(t, aws.ToBool(data.Monitoring.Enabled))

	userData, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
	require.NoError(t, err)
	want, err := UserData(tmpl.options())
	require.NoError(t, err)
	assert.Equal(t, want, string(userData))
	assert.Contains(t, string(userData), "kind: NodeConfig", "the family comes from the node class's alias")

	require.Len(t, data.TagSpecifications, 3)
	for i, rt := range []ec2types.ResourceType{ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeNetworkInterface} {
		assert.Equal(t, rt, data.TagSpecifications[i].ResourceType)
		assert.Equal(t, map[string]string{
			"team": "platform", "nodewright.sh/cluster": "prod", "kubernetes.io/cluster/prod": "owned",
			"nodewright.sh/ec2nodeclass": "default", "nodewright.sh/nodepool": "general", "karpenter.sh/nodepool": "general",
		}, tagMap(data.TagSpecifications[i].Tags), "ownership tags win over the node class's; of Karpenter's keys only the NodePool")
	}
}

func TestDataFromNodeClassSettings(t *testing.T) {
	data, err := Data(testTemplate(func(s *apis.EC2NodeClassSpec) {
		s.AssociatePublicIPAddress = aws.Bool(true)
		s.DetailedMonitoring = aws.Bool(true)
		s.ConnectionTracking = &apis.ConnectionTracking{TCPEstablishedTimeout: aws.Int32(120)}
		s.CPUOptions = &apis.CPUOptions{NestedVirtualization: aws.String("enabled")}
		s.MetadataOptions = &apis.MetadataOptions{HTTPPutResponseHopLimit: aws.Int64(2), HTTPTokens: aws.String("optional")}
		s.BlockDeviceMappings = []*apis.BlockDeviceMapping{{
			DeviceName: aws.String("/dev/xvda"), RootVolume: true,
			EBS: &apis.BlockDevice{VolumeSize: aws.String("100G"), VolumeType: aws.String("io2"), IOPS: aws.Int64(3000),
				Encrypted: aws.Bool(true), KMSKeyID: aws.String("arn:aws:kms:key"), DeleteOnTermination: aws.Bool(true)},
		}}
	}))
	require.NoError(t, err)
	assert.Nil(t, data.SecurityGroupIds, "security groups move into the network interface")
	require.Len(t, data.NetworkInterfaces, 1)
	assert.Equal(t, []string{"sg-1", "sg-2"}, data.NetworkInterfaces[0].Groups)
	assert.True(t, aws.ToBool(data.NetworkInterfaces[0].AssociatePublicIpAddress))
	assert.Equal(t, int32(0), aws.ToInt32(data.NetworkInterfaces[0].DeviceIndex))
	assert.Equal(t, int32(120), aws.ToInt32(data.NetworkInterfaces[0].ConnectionTrackingSpecification.TcpEstablishedTimeout))
	assert.Equal(t, ec2types.NestedVirtualizationSpecification("enabled"), data.CpuOptions.NestedVirtualization)
	assert.True(t, aws.ToBool(data.Monitoring.Enabled))
	assert.Equal(t, int32(2), aws.ToInt32(data.MetadataOptions.HttpPutResponseHopLimit))
	assert.Equal(t, ec2types.LaunchTemplateHttpTokensState("optional"), data.MetadataOptions.HttpTokens)
	assert.Equal(t, ec2types.LaunchTemplateInstanceMetadataEndpointState("enabled"), data.MetadataOptions.HttpEndpoint, "unset fields take defaults")
	assert.Equal(t, []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"),
		Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(94), VolumeType: "io2", Iops: aws.Int32(3000),
			Encrypted: aws.Bool(true), KmsKeyId: aws.String("arn:aws:kms:key"), DeleteOnTermination: aws.Bool(true)}}},
		data.BlockDeviceMappings, "100G is 93.1Gi, rounded up")
}

func TestDataBottlerocketDefaultVolumes(t *testing.T) {
	data, err := Data(testTemplate(func(s *apis.EC2NodeClassSpec) {
		s.AMISelectorTerms = []apis.AMISelectorTerm{{Alias: "bottlerocket@latest"}}
	}))
	require.NoError(t, err)
	require.Len(t, data.BlockDeviceMappings, 2)
	assert.Equal(t, "/dev/xvda", aws.ToString(data.BlockDeviceMappings[0].DeviceName))
	assert.Equal(t, int32(4), aws.ToInt32(data.BlockDeviceMappings[0].Ebs.VolumeSize))
	assert.Equal(t, "/dev/xvdb", aws.ToString(data.BlockDeviceMappings[1].DeviceName))
	assert.Equal(t, int32(20), aws.ToInt32(data.BlockDeviceMappings[1].Ebs.VolumeSize))
	assert.True(t, aws.ToBool(data.BlockDeviceMappings[1].Ebs.Encrypted))
	userData, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
	require.NoError(t, err)
	assert.Contains(t, string(userData), "[settings.kubernetes]")
}

func TestDataRejectsIncompleteTemplates(t *testing.T) {
	tests := map[string]func(*Template){
		"no node class":       func(tt *Template) { tt.NodeClass = nil },
		"no AMI":              func(tt *Template) { tt.ImageID = "" },
		"no instance profile": func(tt *Template) { tt.Resolved.InstanceProfile = "" },
		"no security groups":  func(tt *Template) { tt.Resolved.SecurityGroups = nil },
		"windows":             func(tt *Template) { tt.NodeClass.Spec.AMISelectorTerms[0].Alias = "windows2022@latest" },
		"user data too large": func(tt *Template) {
			tt.NodeClass.Spec.UserData = aws.String("#!/bin/bash\n" + strings.Repeat("# padding\n", 2000))
		},
		"bad volume size": func(tt *Template) {
			tt.NodeClass.Spec.BlockDeviceMappings = []*apis.BlockDeviceMapping{{DeviceName: aws.String("/dev/xvda"),
				EBS: &apis.BlockDevice{VolumeSize: aws.String("huge")}}}
		},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			tmpl := testTemplate(nil)
			mutate(&tmpl)
			_, err := Data(tmpl)
			assert.Error(t, err)
		})
	}
}
