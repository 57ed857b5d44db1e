package nodeclass

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gathering holds each lookup until every kind of lookup has been asked for; one that waits a minute
// for the others fails. Lookups made one after another never gather.
type gathering struct {
	mu   sync.Mutex
	seen map[string]bool
	want int
	all  chan struct{}
}

func (g *gathering) wait(ctx context.Context, kind string) error {
	g.mu.Lock()
	if !g.seen[kind] {
		g.seen[kind] = true
		if len(g.seen) == g.want {
			close(g.all)
		}
	}
	g.mu.Unlock()
	select {
	case <-g.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Minute):
		return errors.New(kind + " waited a minute for the other lookups")
	}
}

type gatheringEC2 struct {
	*ec2.Client
	g *gathering
}

func (c gatheringEC2) DescribeSubnets(ctx context.Context, in *ec2.DescribeSubnetsInput, o ...func(*ec2.Options)) (*ec2.DescribeSubnetsOutput, error) {
	if err := c.g.wait(ctx, "subnets"); err != nil {
		return nil, err
	}
	return c.Client.DescribeSubnets(ctx, in, o...)
}

func (c gatheringEC2) DescribeSecurityGroups(ctx context.Context, in *ec2.DescribeSecurityGroupsInput, o ...func(*ec2.Options)) (*ec2.DescribeSecurityGroupsOutput, error) {
	if err := c.g.wait(ctx, "security groups"); err != nil {
		return nil, err
	}
	return c.Client.DescribeSecurityGroups(ctx, in, o...)
}

func (c gatheringEC2) DescribeImages(ctx context.Context, in *ec2.DescribeImagesInput, o ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error) {
	if err := c.g.wait(ctx, "images"); err != nil {
		return nil, err
	}
	return c.Client.DescribeImages(ctx, in, o...)
}

type gatheringIAM struct {
	*iam.Client
	g *gathering
}

func (c gatheringIAM) GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, o ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error) {
	if err := c.g.wait(ctx, "instance profile"); err != nil {
		return nil, err
	}
	return c.Client.GetInstanceProfile(ctx, in, o...)
}

// TestAClassIsResolvedWithItsLookupsTogether: subnets, security groups, AMIs and the instance profile
// are independent lookups; a cold resolution (every provisioner run in a function without the cache, and
// the first after a class changes) asked for them one after another, four round trips on the path to a
// launch. Fails on the sequential resolver: the subnets lookup waits for the others, which never come.
func TestAClassIsResolvedWithItsLookupsTogether(t *testing.T) {
	w := newWorld(t)
	g := &gathering{seen: map[string]bool{}, want: 4, all: make(chan struct{})}
	r := New(gatheringEC2{Client: w.ec2, g: g}, fakeSSM{}, gatheringIAM{Client: w.iam, g: g}, "demo", "us-east-1",
		func() time.Time { return now })
	res, err := r.Resolve(context.Background(), nodeClass(nil), "1.34")
	require.NoError(t, err)
	assert.True(t, res.Ready, "%+v", res.Status.Conditions)
	assert.Len(t, res.Subnets, 3)
	assert.NotEmpty(t, res.Status.SecurityGroups)
	assert.NotEmpty(t, res.Status.AMIs)
	assert.NotEmpty(t, res.Status.InstanceProfile)
}
