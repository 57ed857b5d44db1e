package nodeclass

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// countingEC2 counts the EC2 reads of resolution.
type countingEC2 struct {
	EC2API
	calls atomic.Int32
}

func (c *countingEC2) DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, o ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
	c.calls.Add(1)
	return c.EC2API.DescribeSubnets(ctx, in, o...)
}

func (c *countingEC2) DescribeSecurityGroups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput, o ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
	c.calls.Add(1)
	return c.EC2API.DescribeSecurityGroups(ctx, in, o...)
}

func (c *countingEC2) DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, o ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	c.calls.Add(1)
	return c.EC2API.DescribeImages(ctx, in, o...)
}

func (c *countingEC2) DescribeCapacityReservations(ctx context.Context, in *ec2.DescribeCapacityReservationsInput, o ...func(*ec2.Options)) (*ec2.DescribeCapacityReservationsOutput, error) {
	c.calls.Add(1)
	return c.EC2API.DescribeCapacityReservations(ctx, in, o...)
}

// countingIAM counts the instance profile reads.
type countingIAM struct {
	IAMAPI
	calls atomic.Int32
}

func (c *countingIAM) GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, o ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error) {
	c.calls.Add(1)
	return c.IAMAPI.GetInstanceProfile(ctx, in, o...)
}

// countingSSM counts the alias parameter reads.
type countingSSM struct {
	fakeSSM
	calls atomic.Int32
}

func (c *countingSSM) GetParameter(ctx context.Context, in *ssm.GetParameterInput, o ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	c.calls.Add(1)
	return c.fakeSSM.GetParameter(ctx, in, o...)
}

// TestResolutionIsCachedPerWarmFunction counts the EC2, SSM and IAM calls of runs resolving one class:
// the second run asks nothing; an aged entry, a changed spec and a stale answer each resolve again.
func TestResolutionIsCachedPerWarmFunction(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ec2c, iamc := &countingEC2{EC2API: w.ec2}, &countingIAM{IAMAPI: w.iam}
	ssmc := &countingSSM{fakeSSM: fakeSSM{
		"/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id": w.amd64Image,
	}}
	clock := now
	tick := func() time.Time { return clock }
	c := NewCache(New(ec2c, ssmc, iamc, "demo", "us-east-1", tick), 0, tick)
	class := func() *apis.EC2NodeClass {
		return nodeClass(func(s *apis.EC2NodeClassSpec) { s.AMISelectorTerms = []apis.AMISelectorTerm{{Alias: "al2023@latest"}} })
	}
	calls := func() [3]int32 { return [3]int32{ec2c.calls.Load(), ssmc.calls.Load(), iamc.calls.Load()} }

	first, err := c.Resolve(ctx, class(), "1.34")
	require.NoError(t, err)
	require.True(t, first.Ready, "%+v", first.Status.Conditions)
	once := calls()
	for i, n := range once {
		assert.Positive(t, n, "resolving asks EC2, SSM and IAM (%d)", i)
	}

	clock = clock.Add(time.Minute) // the next run of the warm function
	again, err := c.Resolve(ctx, class(), "1.34")
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Equal(t, once, calls(), "no call at all for an unchanged class within its age")

	clock = clock.Add(DefaultCacheAge)
	_, err = c.Resolve(ctx, class(), "1.34")
	require.NoError(t, err)
	aged := calls()
	assert.Equal(t, [3]int32{2 * once[0], 2 * once[1], 2 * once[2]}, aged, "past its age the class is resolved again")

	changed := class()
	changed.Spec.SecurityGroupSelectorTerms = []apis.SecurityGroupSelectorTerm{{Name: "nodes"}}
	_, err = c.Resolve(ctx, changed, "1.34")
	require.NoError(t, err)
	assert.Greater(t, calls()[0], aged[0], "a changed spec resolves at once")
	afterChange := calls()

	_, err = c.Resolve(ctx, changed, "1.35")
	require.NoError(t, err)
	assert.Greater(t, calls()[1], afterChange[1], "so does another Kubernetes version (aliases name its AMIs)")
	afterVersion := calls()

	c.Forget("default")
	_, err = c.Resolve(ctx, changed, "1.35")
	require.NoError(t, err)
	assert.Greater(t, calls()[0], afterVersion[0], "a forgotten class is resolved again")
}

func TestAClassThatIsNotReadyIsNotKept(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ec2c := &countingEC2{EC2API: w.ec2}
	c := NewCache(New(ec2c, fakeSSM{}, w.iam, "demo", "us-east-1", func() time.Time { return now }), time.Hour, func() time.Time { return now })
	broken := nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.SubnetSelectorTerms = []apis.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "nobody"}}}
	})
	res, err := c.Resolve(ctx, broken, "1.34")
	require.NoError(t, err)
	require.False(t, res.Ready)
	before := ec2c.calls.Load()
	_, err = c.Resolve(ctx, broken, "1.34")
	require.NoError(t, err)
	assert.Greater(t, ec2c.calls.Load(), before, "the operator may be fixing it: asked again every run")
}

func TestStaleAnswers(t *testing.T) {
	for _, code := range []string{"InvalidSubnetID.NotFound", "InvalidGroup.NotFound", "InvalidAMIID.NotFound", "InvalidAMIID.Unavailable",
		"InvalidAMIID.Malformed", "NoSuchEntity"} {
		assert.True(t, StaleAnswer(code, ""), code)
	}
	assert.True(t, StaleAnswer("InvalidParameterValue",
		"Value (arn:aws:iam::123456789012:instance-profile/x) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name"))
	for _, code := range []string{"InsufficientInstanceCapacity", "UnauthorizedOperation", "RequestLimitExceeded", ""} {
		assert.False(t, StaleAnswer(code, "no capacity"), code)
	}
	assert.False(t, StaleAnswer("InvalidParameterValue", "the instance type does not support the AMI's boot mode"))
}
