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
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
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

// clock is a settable test clock.
type clock struct{ at time.Time }

func (c *clock) now() time.Time { return c.at }

func TestEnsureMarksTheTemplateUsed(t *testing.T) {
	ctx := context.Background()
	api := motoEC2(t)
	c := &clock{at: time.Now().UTC().Truncate(time.Second)}
	p := New(api, "prod", c.now)
	name, err := p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	assert.Equal(t, c.at.Format(time.RFC3339), lastUsedMark(t, api, name), "a new template is marked at creation")

	c.at = c.at.Add(StampEvery - time.Second)
	_, err = p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	assert.Equal(t, c.at.Add(-StampEvery+time.Second).Format(time.RFC3339), lastUsedMark(t, api, name),
		"within StampEvery the provider answers from memory")

	c.at = c.at.Add(time.Second)
	_, err = p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	assert.Equal(t, c.at.Format(time.RFC3339), lastUsedMark(t, api, name), "after StampEvery it marks again")

	c.at = c.at.Add(time.Minute)
	_, err = New(api, "prod", c.now).Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	assert.Equal(t, c.at.Format(time.RFC3339), lastUsedMark(t, api, name),
		"another invocation finding the template made marks it too")
	assert.Equal(t, int32(2), api.creates.Load())
}

// lastUsedMark reads the template's TagLastUsed as DescribeTags has it now.
func lastUsedMark(t *testing.T, api *countingEC2, name string) string {
	t.Helper()
	out, err := api.DescribeTags(context.Background(), &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("resource-id"), Values: []string{templateID(t, api, name)}},
		{Name: aws.String("key"), Values: []string{TagLastUsed}}}})
	require.NoError(t, err)
	require.Len(t, out.Tags, 1)
	return aws.ToString(out.Tags[0].Value)
}

func TestDeleteUnused(t *testing.T) {
	ctx := context.Background()
	moto := awstest.Shared(t)
	api := &countingEC2{Client: ec2.NewFromConfig(moto.Config())}
	c := &clock{at: time.Now()}
	p := New(api, "prod", c.now)
	keep, err := p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	changed := testTemplate(nil)
	changed.ImageID = "ami-0fedcba9876543210"
	unused, err := p.Ensure(ctx, changed)
	require.NoError(t, err)
	byID := testTemplate(nil)
	byID.Options.Labels["team"] = "search"
	keptByID, err := p.Ensure(ctx, byID)
	require.NoError(t, err)

	// A template of another cluster and one not made by Nodewright but tagged with this cluster stay.
	otherCluster, err := New(api, "staging", c.now).Ensure(ctx, func() Template {
		tt := testTemplate(nil)
		tt.Options.Cluster.Name = "staging"
		return tt
	}())
	require.NoError(t, err)
	foreign := map[string][]ec2types.Tag{
		"eks-managed-nodegroup": {{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("prod")}},
		// Karpenter's own template for the same cluster.
		"karpenter.k8s.aws/1234567890": {{Key: aws.String("karpenter.k8s.aws/cluster"), Value: aws.String("prod")},
			{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("prod")}},
		// Named like Nodewright's, tagged as Karpenter or an older release tags for the cluster, but without
		// Nodewright's ownership tag: not ours to delete.
		namePrefix("prod") + "lookalike": {{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("prod")},
			{Key: aws.String("kubernetes.io/cluster/prod"), Value: aws.String("owned")}},
		// Named like Nodewright's and untagged.
		namePrefix("prod") + "untagged": nil,
		// Tagged as Nodewright's for the cluster but not named so: not one Ensure made.
		"hand-made": {{Key: aws.String("nodewright.sh/cluster"), Value: aws.String("prod")}},
	}
	for name, tags := range foreign {
		in := &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String(name),
			LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0123456789abcdef0")}}
		if tags != nil {
			in.TagSpecifications = []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: tags}}
		}
		_, err = api.CreateLaunchTemplate(ctx, in)
		require.NoError(t, err)
	}

	c.at = c.at.Add(MinUnusedAge - time.Minute)
	young, err := p.DeleteUnused(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, young, "templates made within MinUnusedAge may belong to a launch in flight")

	c.at = c.at.Add(2 * time.Minute)
	_, err = p.Ensure(ctx, testTemplate(nil)) // the current configuration still launches from it: marked again
	require.NoError(t, err)
	// The lifecycle function deletes, with its own client: with $NODEWRIGHT_AWS_CALLS set its calls are
	// recorded for infra's IAM proof of the lifecycle role.
	lifecycle := New(ec2.NewFromConfig(awscalls.Instrument(moto.Config(),
		awscalls.Deployment{Cluster: "prod", Account: awstest.AccountID, Manifests: awscalls.SampleManifests}, "lifecycle")), "prod", c.now)
	deleted, err := lifecycle.DeleteUnused(ctx, []string{templateID(t, api, keptByID)})
	require.NoError(t, err)
	assert.Equal(t, []string{unused}, deleted)

	out, err := api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	require.NoError(t, err)
	var names []string
	for _, lt := range out.LaunchTemplates {
		names = append(names, aws.ToString(lt.LaunchTemplateName))
	}
	want := []string{keep, keptByID, otherCluster}
	for name := range foreign {
		want = append(want, name)
	}
	assert.ElementsMatch(t, want, names)

	c.at = c.at.Add(MinUnusedAge)
	deleted, err = p.DeleteUnused(ctx, []string{keptByID})
	require.NoError(t, err)
	assert.Equal(t, []string{keep}, deleted, "unmarked for MinUnusedAge, and kept by neither name nor id")

	creates := api.creates.Load()
	again, err := p.Ensure(ctx, changed)
	require.NoError(t, err)
	assert.Equal(t, unused, again)
	assert.Equal(t, creates+1, api.creates.Load(), "a deleted template is forgotten and made again")
}

func templateID(t *testing.T, api *countingEC2, name string) string {
	t.Helper()
	out, err := api.DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	require.NoError(t, err)
	require.Len(t, out.LaunchTemplates, 1)
	return aws.ToString(out.LaunchTemplates[0].LaunchTemplateId)
}

func createTime(t *testing.T, api *countingEC2, name string) time.Time {
	t.Helper()
	out, err := api.DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	require.NoError(t, err)
	require.Len(t, out.LaunchTemplates, 1)
	return aws.ToTime(out.LaunchTemplates[0].CreateTime)
}

// strictTags answers CreateTags on a launch template that no longer exists as EC2 does (moto tags any id).
type strictTags struct{ *countingEC2 }

func (s strictTags) CreateTags(ctx context.Context, in *ec2.CreateTagsInput, optFns ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error) {
	out, err := s.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateIds: in.Resources})
	if err != nil || len(out.LaunchTemplates) != len(in.Resources) {
		return nil, &smithy.GenericAPIError{Code: "InvalidLaunchTemplateId.NotFound", Message: "gone"}
	}
	return s.countingEC2.CreateTags(ctx, in, optFns...)
}

func TestEnsureMakesAgainATemplateAnotherInvocationDeleted(t *testing.T) {
	ctx := context.Background()
	api := motoEC2(t)
	c := &clock{at: time.Now()}
	p := New(strictTags{api}, "prod", c.now)
	name, err := p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)

	// EC2 stamps the creation with its own clock, later than c's start by however long Ensure took.
	if created := createTime(t, api, name); created.After(c.at) {
		c.at = created
	}
	c.at = c.at.Add(MinUnusedAge)
	deleted, err := New(api, "prod", c.now).DeleteUnused(ctx, nil) // the lifecycle, another process
	require.NoError(t, err)
	require.Equal(t, []string{name}, deleted)

	again, err := p.Ensure(ctx, testTemplate(nil))
	require.NoError(t, err)
	assert.Equal(t, name, again)
	assert.Equal(t, int32(2), api.creates.Load(), "the remembered template was gone when marked, so it is made again")
	assert.Equal(t, c.at.UTC().Format(time.RFC3339), lastUsedMark(t, api, name))
}
