package nodeclass

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// TestResolveWithoutIAMTakesTheNamedProfile: in an isolated VPC the resolver calls no IAM API (its IAM
// client here answers every call with an error): a named instance profile is taken as named, and a class
// with a role says it needs an instanceProfile.
func TestResolveWithoutIAMTakesTheNamedProfile(t *testing.T) {
	w := newWorld(t)
	unreachable := &unreachableIAM{}
	r := New(w.ec2, fakeSSM{}, unreachable, "demo", "us-east-1", func() time.Time { return now }).WithoutIAM()

	res, err := r.Resolve(context.Background(), nodeClass(func(s *apis.EC2NodeClassSpec) {
		s.Role, s.InstanceProfile = "", aws.String("KarpenterNodeInstanceProfile-demo")
	}), "1.34")
	require.NoError(t, err)
	require.True(t, res.Ready, "%+v", res.Status.Conditions)
	assert.Equal(t, "KarpenterNodeInstanceProfile-demo", res.Status.InstanceProfile)

	res, err = r.Resolve(context.Background(), nodeClass(nil), "1.34")
	require.NoError(t, err, "a role is a condition, not an error")
	assert.False(t, res.Ready)
	ip := condition(res, apis.ConditionTypeInstanceProfileReady)
	assert.Equal(t, metav1.ConditionFalse, ip.Status)
	assert.Contains(t, ip.Message, "spec.role KarpenterNodeRole-demo needs an instance profile created through the IAM API")
	assert.Contains(t, ip.Message, "name an existing spec.instanceProfile instead")
	assert.Zero(t, unreachable.calls, "no IAM call")
}

// unreachableIAM is IAM as an isolated VPC sees it: every call fails, and is counted.
type unreachableIAM struct{ calls int }

func (u *unreachableIAM) fail() error {
	u.calls++
	return errors.New("dial tcp: lookup iam.amazonaws.com: i/o timeout")
}

func (u *unreachableIAM) GetInstanceProfile(context.Context, *iam.GetInstanceProfileInput, ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error) {
	return nil, u.fail()
}

func (u *unreachableIAM) CreateInstanceProfile(context.Context, *iam.CreateInstanceProfileInput, ...func(*iam.Options)) (*iam.CreateInstanceProfileOutput, error) {
	return nil, u.fail()
}

func (u *unreachableIAM) AddRoleToInstanceProfile(context.Context, *iam.AddRoleToInstanceProfileInput, ...func(*iam.Options)) (*iam.AddRoleToInstanceProfileOutput, error) {
	return nil, u.fail()
}

func (u *unreachableIAM) RemoveRoleFromInstanceProfile(context.Context, *iam.RemoveRoleFromInstanceProfileInput, ...func(*iam.Options)) (*iam.RemoveRoleFromInstanceProfileOutput, error) {
	return nil, u.fail()
}
