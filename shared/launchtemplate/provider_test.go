package launchtemplate

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

// countingEC2 counts CreateLaunchTemplate calls on the way to the real client.
type countingEC2 struct {
	*ec2.Client
	creates atomic.Int32
}

func (c *countingEC2) CreateLaunchTemplate(ctx context.Context, in *ec2.CreateLaunchTemplateInput, optFns ...func(*ec2.Options)) (*ec2.CreateLaunchTemplateOutput, error) {
	c.creates.Add(1)
	return c.Client.CreateLaunchTemplate(ctx, in, optFns...)
}

func motoEC2(t *testing.T) *countingEC2 {
	t.Helper()
	return &countingEC2{Client: ec2.NewFromConfig(awstest.Shared(t).Config())}
}

func later() time.Time { return time.Now().Add(time.Hour) }

func TestNameIsDeterministic(t *testing.T) {
	a, err := Data(testTemplate(nil))
	require.NoError(t, err)
	b, err := Data(testTemplate(nil))
	require.NoError(t, err)
	nameA, err := Name("prod", a)
	require.NoError(t, err)
	nameB, err := Name("prod", b)
	require.NoError(t, err)
	assert.Equal(t, nameA, nameB)
	assert.Regexp(t, `^nodewright/prod/[0-9a-f]{16}$`, nameA)
	assert.LessOrEqual(t, len(NamePrefix+"/"+strings.Repeat("c", 100)+"/")+16, 128, "fits EC2's 128-character limit for the longest EKS cluster name")
}

func TestEnsureCreatesOnceAndRoundTrips(t *testing.T) {
	ctx := context.Background()
	api := motoEC2(t)
	p := New(api, "prod", later)
	tmpl := testTemplate(nil)

	name, err := p.Ensure(ctx, tmpl)
	require.NoError(t, err)
	again, err := p.Ensure(ctx, tmpl)
	require.NoError(t, err)
	assert.Equal(t, name, again)
	assert.Equal(t, int32(1), api.creates.Load(), "the second Ensure is answered from memory")

	other := New(api, "prod", later) // another invocation, same inputs: EC2 says it exists, which is fine
	third, err := other.Ensure(ctx, tmpl)
	require.NoError(t, err)
	assert.Equal(t, name, third)

	out, err := api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	require.NoError(t, err)
	require.Len(t, out.LaunchTemplates, 1)
	ltTags := tagMap(out.LaunchTemplates[0].Tags)
	assert.Equal(t, "prod", ltTags["nodewright.sh/cluster"])
	assert.Equal(t, "default", ltTags["nodewright.sh/ec2nodeclass"])
	for _, k := range []string{"eks:eks-cluster-name", "karpenter.k8s.aws/cluster", "karpenter.k8s.aws/ec2nodeclass", "karpenter.sh/nodepool"} {
		assert.NotContains(t, ltTags, k, "Karpenter deletes or lists launch templates by this key")
	}

	versions, err := api.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String(name)})
	require.NoError(t, err)
	require.Len(t, versions.LaunchTemplateVersions, 1)
	data := versions.LaunchTemplateVersions[0].LaunchTemplateData
	assert.Equal(t, "ami-0123456789abcdef0", aws.ToString(data.ImageId))
	assert.Equal(t, "prod_1234", aws.ToString(data.IamInstanceProfile.Name))
	assert.ElementsMatch(t, []string{"sg-1", "sg-2"}, data.SecurityGroupIds)
	require.NotNil(t, data.MetadataOptions)
	assert.Equal(t, ec2types.LaunchTemplateHttpTokensStateRequired, data.MetadataOptions.HttpTokens)
	require.NotEmpty(t, data.BlockDeviceMappings)
	assert.Equal(t, "/dev/xvda", aws.ToString(data.BlockDeviceMappings[0].DeviceName))

	userData, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
	require.NoError(t, err)
	cfg := decodeNodeConfig(t, string(userData))
	taints := cfg["spec"].(map[string]any)["kubelet"].(map[string]any)["config"].(map[string]any)["registerWithTaints"]
	assert.Contains(t, taints, map[string]any{"key": "karpenter.sh/unregistered", "effect": "NoExecute"})
}

func TestEnsureMakesANewTemplateWhenInputsChange(t *testing.T) {
	ctx := context.Background()
	p := New(motoEC2(t), "prod", later)
	first, err := p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	changed := testTemplate(nil)
	changed.Options.Labels["team"] = "search"
	second, err := p.Ensure(ctx, changed)
	require.NoError(t, err)
	assert.NotEqual(t, first, second)
	newAMI := testTemplate(nil)
	newAMI.ImageID = "ami-0fedcba9876543210"
	third, err := p.Ensure(ctx, newAMI)
	require.NoError(t, err)
	assert.NotEqual(t, first, third)
	assert.NotEqual(t, second, third)
}

func TestEnsureRefusesAnotherCluster(t *testing.T) {
	p := New(motoEC2(t), "other", later)
	_, err := p.Ensure(context.Background(), testTemplate(nil))
	assert.ErrorContains(t, err, "cluster")
}

func TestEnsureReportsInvalidInputs(t *testing.T) {
	p := New(motoEC2(t), "prod", later)
	tmpl := testTemplate(nil)
	tmpl.ImageID = ""
	_, err := p.Ensure(context.Background(), tmpl)
	assert.ErrorContains(t, err, "AMI")
}

func TestDeleteUnused(t *testing.T) {
	ctx := context.Background()
	api := motoEC2(t)
	p := New(api, "prod", later)
	keep, err := p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	changed := testTemplate(nil)
	changed.ImageID = "ami-0fedcba9876543210"
	unused, err := p.Ensure(ctx, changed)
	require.NoError(t, err)

	// A template of another cluster and one not made by Nodewright but tagged with this cluster stay.
	otherCluster, err := New(api, "staging", later).Ensure(ctx, func() Template {
		tt := testTemplate(nil)
		tt.Options.Cluster.Name = "staging"
		return tt
	}())
	require.NoError(t, err)
	_, err = api.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("eks-managed-nodegroup"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0123456789abcdef0")},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags: []ec2types.Tag{{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("prod")}}}},
	})
	require.NoError(t, err)
	// Named like Nodewright's, tagged as Karpenter or an older release tags for the cluster, but without
	// Nodewright's ownership tag: not ours to delete.
	lookalike := namePrefix("prod") + "lookalike"
	_, err = api.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(lookalike),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0123456789abcdef0")},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags: []ec2types.Tag{{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("prod")},
				{Key: aws.String("kubernetes.io/cluster/prod"), Value: aws.String("owned")}}}},
	})
	require.NoError(t, err)

	young, err := New(api, "prod", time.Now).DeleteUnused(ctx, []string{keep})
	require.NoError(t, err)
	assert.Empty(t, young, "templates younger than MinUnusedAge may belong to a launch in flight")

	deleted, err := p.DeleteUnused(ctx, []string{keep})
	require.NoError(t, err)
	assert.Equal(t, []string{unused}, deleted)

	out, err := api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	require.NoError(t, err)
	var names []string
	for _, lt := range out.LaunchTemplates {
		names = append(names, aws.ToString(lt.LaunchTemplateName))
	}
	assert.ElementsMatch(t, []string{keep, otherCluster, "eks-managed-nodegroup", lookalike}, names)

	creates := api.creates.Load()
	again, err := p.Ensure(ctx, changed)
	require.NoError(t, err)
	assert.Equal(t, unused, again)
	assert.Equal(t, creates+1, api.creates.Load(), "a deleted template is forgotten and made again")
}
