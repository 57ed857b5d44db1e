package driftinput

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

	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

// fakeSSM stands in for the public parameters behind an @latest alias, which moto refuses to hold.
type fakeSSM map[string]string

func (f fakeSSM) GetParameter(_ context.Context, in *ssm.GetParameterInput, _ ...func(*ssm.Options)) (*ssm.GetParameterOutput, error) {
	v, ok := f[aws.ToString(in.Name)]
	if !ok {
		return nil, &ssmtypes.ParameterNotFound{Message: aws.String("not found")}
	}
	return &ssm.GetParameterOutput{Parameter: &ssmtypes.Parameter{Name: in.Name, Value: aws.String(v)}}, nil
}

// TestLatestAliasMovingOnIsAMIDrift: a node launched from what al2023@latest named is drifted once the
// public parameter names a newer image, through the real resolver (moto's images, faked parameters).
func TestLatestAliasMovingOnIsAMIDrift(t *testing.T) {
	ctx := context.Background()
	cfg := awstest.Shared(t).Config()
	ec2c := ec2.NewFromConfig(cfg)
	images, err := ec2c.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"},
		Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"x86_64"}}}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(images.Images), 2, "moto ships several x86_64 images")
	old, newer := aws.ToString(images.Images[0].ImageId), aws.ToString(images.Images[1].ImageId)

	const standard = "/aws/service/eks/optimized-ami/1.34/amazon-linux-2023/x86_64/standard/recommended/image_id"
	params := fakeSSM{standard: old}
	r := nodeclass.New(ec2c, params, iam.NewFromConfig(cfg), "demo", "us-east-1", func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) })
	np, nc := testPool(), testClass()
	claim := state.Claim{Name: "default-abcde", ImageID: old,
		Labels: map[string]string{corev1.LabelInstanceTypeStable: "m5.large", corev1.LabelArchStable: "amd64", "team": "a"}}

	res, err := r.Resolve(ctx, nc, "1.34")
	require.NoError(t, err)
	got := choosing(For(claim, np, nc, res, nil, Observed{}), res.Status.AMIs[0].ID).Detect()
	assert.NotContains(t, got.Reasons, drift.AMIDrift, "the node runs what the alias names")
	assert.NotContains(t, got.Undecided, drift.AMIDrift)

	params[standard] = newer
	res, err = r.Resolve(ctx, nc, "1.34")
	require.NoError(t, err)
	got = choosing(For(claim, np, nc, res, nil, Observed{}), res.Status.AMIs[0].ID).Detect()
	assert.Equal(t, drift.Drifted, got.Verdict)
	assert.Equal(t, drift.AMIDrift, got.Reason)
	assert.Equal(t, old, got.Details["oldImageId"])
	assert.Equal(t, newer, got.Details["newImageId"])
}
