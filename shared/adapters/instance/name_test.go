package instance

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNameInstanceTagsTheNodeNameOnly(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	l := New(n.client, "demo")
	inst, err := l.Launch(ctx, n.request("default-n4m3d"))
	require.NoError(t, err)
	require.NotContains(t, inst.Tags, TagName, "the node name is not known at launch")

	require.NoError(t, l.NameInstance(ctx, inst.ID, "ip-10-1-1-5.ec2.internal"))
	got, err := l.LiveByID(ctx, []string{inst.ID})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "ip-10-1-1-5.ec2.internal", got[0].Tags[TagName])
	delete(got[0].Tags, TagName)
	assert.Equal(t, inst.Tags, got[0].Tags, "no other tag changes")

	assert.Error(t, l.NameInstance(ctx, inst.ID, ""), "a Node has a name")
}

// recordTags records every CreateTags call.
type recordTags struct {
	fakeEC2
	calls []*ec2.CreateTagsInput
}

func (r *recordTags) CreateTags(_ context.Context, in *ec2.CreateTagsInput, _ ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error) {
	r.calls = append(r.calls, in)
	return &ec2.CreateTagsOutput{}, nil
}

// The lifecycle's role may add only the Name key (infra allows nothing else), one instance at a time.
func TestNameInstanceSendsOnlyTheNameKey(t *testing.T) {
	r := &recordTags{}
	require.NoError(t, New(r, "demo").NameInstance(context.Background(), "i-0123456789abcdef0", "ip-10-1-1-5.ec2.internal"))
	require.Len(t, r.calls, 1)
	assert.Equal(t, []string{"i-0123456789abcdef0"}, r.calls[0].Resources)
	require.Len(t, r.calls[0].Tags, 1)
	assert.Equal(t, "Name", aws.ToString(r.calls[0].Tags[0].Key))
	assert.Equal(t, "ip-10-1-1-5.ec2.internal", aws.ToString(r.calls[0].Tags[0].Value))
}
