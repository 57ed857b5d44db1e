package nodeclass

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// fakeSSM stands in for the public AMI parameters under /aws/service/, which moto neither holds nor
// lets anyone write; the AMIs they name are real moto images.
type fakeSSM map[string]string

func (f fakeSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	v, ok := f[aws.ToString(in.Name)]
	if !ok {
		return nil, &ssmtypes.ParameterNotFound{Message: aws.String("not found")}
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(v)}}, nil
}

type world struct {
	ec2                  *ec2.Client
	iam                  *iam.Client
	amd64Image, armImage string
	customImage          string
}

// newWorld builds a VPC with tagged subnets and security groups, an image of our own and a node role.
func newWorld(t *testing.T) world {
	t.Helper()
	ctx := context.Background()
	moto := awstest.Shared(t)
	w := world{ec2: ec2.NewFromConfig(moto.Config()), iam: iam.NewFromConfig(moto.Config())}
	vpc, err := w.ec2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	require.NoError(t, err)
	tags := func(kv ...string) []ec2types.TagSpecification {
		var ts []ec2types.Tag
		for i := 0; i < len(kv); i += 2 {
			ts = append(ts, ec2types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
		}
		return []ec2types.TagSpecification{{ResourceType: "subnet", Tags: ts}}
	}
	for _, s := range []struct{ cidr, zone, team string }{
		{"10.0.0.0/24", "us-east-1a", "demo"}, {"10.0.16.0/20", "us-east-1b", "demo"}, {"10.0.1.0/24", "us-east-1b", "demo"},
		{"10.0.2.0/24", "us-east-1c", "other"},
	} {
		_, err := w.ec2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String(s.cidr),
			AvailabilityZone: aws.String(s.zone), TagSpecifications: tags("karpenter.sh/discovery", s.team)})
		require.NoError(t, err)
	}
	_, err = w.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nodes"), Description: aws.String("nodes"),
		VpcId: vpc.Vpc.VpcId, TagSpecifications: []ec2types.TagSpecification{{ResourceType: "security-group",
			Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/discovery"), Value: aws.String("demo")}}}}})
	require.NoError(t, err)
	_, err = w.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("extra"), Description: aws.String("extra"), VpcId: vpc.Vpc.VpcId})
	require.NoError(t, err)

	w.amd64Image = firstImage(t, w.ec2, "x86_64")
	w.armImage = firstImage(t, w.ec2, "arm64")
	inst, err := w.ec2.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(w.amd64Image), MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	require.NoError(t, err)
	img, err := w.ec2.CreateImage(ctx, &ec2.CreateImageInput{InstanceId: inst.Instances[0].InstanceId, Name: aws.String("golden-eks-node"),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: "image", Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("platform")}}}}})
	require.NoError(t, err)
	w.customImage = aws.ToString(img.ImageId)

	_, err = w.iam.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("KarpenterNodeRole-demo"), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)})
	require.NoError(t, err)
	return w
}

func firstImage(t *testing.T, c *ec2.Client, arch string) string {
	t.Helper()
	out, err := c.DescribeImages(context.Background(), &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{arch}}}})
	require.NoError(t, err)
	require.NotEmpty(t, out.Images, "moto ships %s images", arch)
	return aws.ToString(out.Images[0].ImageId)
}

func nodeClass(mutate func(*apis.EC2NodeClassSpec)) *apis.EC2NodeClass {
	nc := &apis.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", Generation: 3}, Spec: apis.EC2NodeClassSpec{
		Role:                       "KarpenterNodeRole-demo",
		AMISelectorTerms:           []apis.AMISelectorTerm{{Tags: map[string]string{"team": "platform"}}},
		SubnetSelectorTerms:        []apis.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
		SecurityGroupSelectorTerms: []apis.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
	}}
	if mutate != nil {
		mutate(&nc.Spec)
	}
	return nc
}

func condition(res Resolution, kind string) metav1.Condition {
	for _, c := range res.Status.Conditions {
		if c.Type == kind {
			return c
		}
	}
	return metav1.Condition{}
}

func TestResolveTaggedClass(t *testing.T) {
	w := newWorld(t)
	r := New(w.ec2, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(nil), "1.34")
	require.NoError(t, err)
	require.True(t, res.Ready, "%+v", res.Status.Conditions)
	assert.Equal(t, metav1.ConditionTrue, condition(res, ConditionTypeReady).Status)
	assert.EqualValues(t, 3, condition(res, ConditionTypeReady).ObservedGeneration)

	require.Len(t, res.Subnets, 3, "the 'other' subnet is not selected")
	assert.Equal(t, "us-east-1b", res.Subnets[0].Zone, "the /20 has the most free addresses")
	best := BestPerZone(res.Subnets)
	assert.Len(t, best, 2)
	assert.Equal(t, res.Subnets[0].ID, best["us-east-1b"].ID, "per zone, the subnet with most free addresses")

	require.Len(t, res.Status.SecurityGroups, 1)
	assert.Equal(t, "nodes", res.Status.SecurityGroups[0].Name)

	require.Len(t, res.Status.AMIs, 1)
	assert.Equal(t, w.customImage, res.Status.AMIs[0].ID)
	assert.Equal(t, "amd64", res.Status.AMIs[0].Requirements[0].Values[0])

	assert.Equal(t, InstanceProfileName("demo", "us-east-1", "default"), res.Status.InstanceProfile)
	profile, err := w.iam.GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(res.Status.InstanceProfile)})
	require.NoError(t, err)
	require.Len(t, profile.InstanceProfile.Roles, 1)
	assert.Equal(t, "KarpenterNodeRole-demo", aws.ToString(profile.InstanceProfile.Roles[0].RoleName))

	again, err := r.Resolve(context.Background(), nodeClass(nil), "1.34")
	require.NoError(t, err)
	assert.True(t, again.Ready, "resolving again is idempotent")
}

func TestResolveSelectorsByIDAndName(t *testing.T) {
	w := newWorld(t)
	r := New(w.ec2, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return now })
	first, err := r.Resolve(context.Background(), nodeClass(nil), "1.34")
	require.NoError(t, err)
	res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.SubnetSelectorTerms = []apis.SubnetSelectorTerm{{ID: first.Subnets[2].ID}}
		s.SecurityGroupSelectorTerms = []apis.SecurityGroupSelectorTerm{{Name: "extra"}}
		s.AMISelectorTerms = []apis.AMISelectorTerm{{ID: w.armImage}}
	}), "1.34")
	require.NoError(t, err)
	require.True(t, res.Ready, "%+v", res.Status.Conditions)
	assert.Equal(t, []string{first.Subnets[2].ID}, []string{res.Subnets[0].ID})
	assert.Equal(t, "extra", res.Status.SecurityGroups[0].Name)
	assert.Equal(t, "arm64", res.Status.AMIs[0].Requirements[0].Values[0])
}

func TestResolveReportsWhatIsMissing(t *testing.T) {
	w := newWorld(t)
	r := New(w.ec2, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.SubnetSelectorTerms = []apis.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "nowhere"}}}
		s.SecurityGroupSelectorTerms = []apis.SecurityGroupSelectorTerm{{ID: "sg-0123456789abcdef0"}}
		s.AMISelectorTerms = []apis.AMISelectorTerm{{Tags: map[string]string{"team": "nobody"}}}
		s.Role = "NoSuchRole"
	}), "1.34")
	require.NoError(t, err, "nothing matching is a condition, not an error")
	assert.False(t, res.Ready)
	assert.Equal(t, "SubnetsNotFound", condition(res, apis.ConditionTypeSubnetsReady).Reason)
	assert.Equal(t, "SecurityGroupsNotFound", condition(res, apis.ConditionTypeSecurityGroupsReady).Reason)
	assert.Equal(t, "AMINotFound", condition(res, apis.ConditionTypeAMIsReady).Reason)
	ip := condition(res, apis.ConditionTypeInstanceProfileReady)
	assert.Equal(t, metav1.ConditionFalse, ip.Status)
	assert.Contains(t, ip.Message, "role NoSuchRole does not exist")
	assert.Contains(t, condition(res, ConditionTypeReady).Message, "SubnetsReady")
}

func TestResolveAliasThroughPublicParameters(t *testing.T) {
	w := newWorld(t)
	params := fakeSSM{
		"/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id": w.amd64Image,
		"/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/arm64/standard/recommended/image_id":  w.armImage,
		"/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/nvidia/recommended/image_id":   w.customImage,
	}
	r := New(w.ec2, params, w.iam, "demo", "us-east-1", func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.AMISelectorTerms = []apis.AMISelectorTerm{{Alias: "al2023@latest"}}
	}), "1.34")
	require.NoError(t, err)
	require.True(t, res.Ready, "%+v", res.Status.Conditions)
	require.Len(t, res.Status.AMIs, 3, "standard amd64 and arm64, NVIDIA amd64; the arm64 NVIDIA variant is not published here")
	byID := map[string]apis.AMIStatus{}
	for _, a := range res.Status.AMIs {
		byID[a.ID] = a
	}
	assert.Equal(t, "Exists", string(byID[w.customImage].Requirements[1].Operator), "the NVIDIA image serves GPU instances")
	assert.Equal(t, "DoesNotExist", string(byID[w.amd64Image].Requirements[1].Operator))

	res, err = r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.AMISelectorTerms = []apis.AMISelectorTerm{{Alias: "al2@latest"}}
	}), "1.34")
	require.NoError(t, err)
	assert.Equal(t, "AMINotSupported", condition(res, apis.ConditionTypeAMIsReady).Reason)
}

func TestAliasParameterPaths(t *testing.T) {
	cases := []struct {
		alias string
		k8s   string
		want  string
	}{
		{"al2023@latest", "1.34", "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id"},
		{"al2023@v20251001", "1.34", "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.34-v20251001/image_id"},
		{"bottlerocket@latest", "1.34", "/aws/service/bottlerocket/aws-k8s-1.34/x86_64/latest/image_id"},
		{"bottlerocket@v1.45.0", "1.34", "/aws/service/bottlerocket/aws-k8s-1.34/x86_64/1.45.0/image_id"},
		{"al2@latest", "1.32", "/aws/service/eks/optimized-ami/1.32/amazon-linux-2/recommended/image_id"},
		{"windows2022@latest", "1.34", "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.34/image_id"},
	}
	for _, tc := range cases {
		t.Run(tc.alias, func(t *testing.T) {
			a, ok := apis.ParseAlias(tc.alias)
			require.True(t, ok)
			params, err := aliasParameters(a, tc.k8s)
			require.NoError(t, err)
			assert.Equal(t, tc.want, params[0].path)
		})
	}
}

// variantPaths maps each parameter path of an alias to the variants its image serves, named by the
// label its requirements need to exist ("standard" when none does).
func variantPaths(t *testing.T, alias, k8s string) map[string][]string {
	t.Helper()
	a, ok := apis.ParseAlias(alias)
	require.True(t, ok)
	params, err := aliasParameters(a, k8s)
	require.NoError(t, err)
	out := map[string][]string{}
	for _, p := range params {
		for _, reqs := range p.requirements {
			variant := "standard"
			for _, r := range reqs {
				if r.Operator == "Exists" {
					variant = map[string]string{labelGPUCount: "nvidia", labelAccelerator: "neuron"}[r.Key]
				}
			}
			out[p.path] = append(out[p.path], reqs[0].Values[0]+"/"+variant)
		}
	}
	return out
}

func TestAliasParametersServeNeuronInstances(t *testing.T) {
	al2023 := variantPaths(t, "al2023@latest", "1.34")
	assert.Equal(t, []string{"amd64/neuron"}, al2023["/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/neuron/recommended/image_id"])
	assert.NotContains(t, al2023, "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/arm64/neuron/recommended/image_id",
		"Neuron instances are x86_64 only")
	pinned := variantPaths(t, "al2023@v20251001", "1.34")
	assert.Equal(t, []string{"amd64/neuron"},
		pinned["/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/neuron/amazon-eks-node-al2023-x86_64-neuron-1.34-v20251001/image_id"])

	al2 := variantPaths(t, "al2@latest", "1.32")
	assert.Equal(t, []string{"amd64/nvidia", "amd64/neuron"}, al2["/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/recommended/image_id"],
		"the AL2 GPU image carries the Neuron driver too")
	al2Pinned := variantPaths(t, "al2@v20250715", "1.32")
	assert.Equal(t, map[string][]string{
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2/amazon-eks-node-1.32-v20250715/image_id":             {"amd64/standard"},
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/amazon-eks-gpu-node-1.32-v20250715/image_id":     {"amd64/nvidia", "amd64/neuron"},
		"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-arm64/amazon-eks-arm64-node-1.32-v20250715/image_id": {"arm64/standard"},
	}, al2Pinned, "each AL2 image names its pinned releases its own way")

	br := variantPaths(t, "bottlerocket@latest", "1.34")
	assert.Equal(t, []string{"amd64/standard", "amd64/neuron"}, br["/aws/service/bottlerocket/aws-k8s-1.34/x86_64/latest/image_id"])
}

func TestResolveAliasNeuronVariant(t *testing.T) {
	w := newWorld(t)
	const neuron = "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/neuron/recommended/image_id"
	params := fakeSSM{
		"/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id": w.amd64Image,
		neuron: w.customImage,
	}
	r := New(w.ec2, params, w.iam, "demo", "us-east-1", func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.AMISelectorTerms = []apis.AMISelectorTerm{{Alias: "al2023@latest"}}
	}), "1.34")
	require.NoError(t, err)
	require.True(t, res.Ready, "%+v", res.Status.Conditions)
	byID := map[string]apis.AMIStatus{}
	for _, a := range res.Status.AMIs {
		byID[a.ID] = a
	}
	require.Contains(t, byID, w.customImage, "the neuron parameter's image is resolved")
	assert.Equal(t, []corev1.NodeSelectorRequirement{archIs("amd64"), exists(labelAccelerator, true)}, byID[w.customImage].Requirements,
		"it serves instances with accelerators (Inferentia, Trainium)")

	// The AL2 GPU image is one AMI serving two variants: it is listed once per variant.
	r = New(w.ec2, fakeSSM{"/aws/service/eks/optimized-ami/1.32/amazon-linux-2-gpu/recommended/image_id": w.customImage}, w.iam, "demo", "us-east-1",
		func() time.Time { return now })
	res, err = r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.AMISelectorTerms = []apis.AMISelectorTerm{{Alias: "al2@latest"}}
	}), "1.32")
	require.NoError(t, err)
	require.Len(t, res.Status.AMIs, 2)
	var keys []string
	for _, a := range res.Status.AMIs {
		assert.Equal(t, w.customImage, a.ID)
		keys = append(keys, a.Requirements[1].Key+" "+string(a.Requirements[1].Operator))
	}
	assert.ElementsMatch(t, []string{labelGPUCount + " Exists", labelAccelerator + " Exists"}, keys)
}
