package instance

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runTagged runs one instance with tags, as another controller would.
func runTagged(t *testing.T, n network, tags map[string]string) string {
	t.Helper()
	images, err := n.client.DescribeImages(context.Background(), &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	require.NoError(t, err)
	out, err := n.client.RunInstances(context.Background(), &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId,
		InstanceType: ec2types.InstanceTypeM5Large, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId:          aws.String(n.subnets["us-east-1a"]),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tagList(tags)}}})
	require.NoError(t, err)
	return aws.ToString(out.Instances[0].InstanceId)
}

// Instances tagged as Karpenter v1.0 and v1.1 tag theirs (and a managed node group's) are not
// Nodewright's: List and FindByClaim never return them, whatever cluster and claim tags they share.
func TestListAndFindSkipForeignInstances(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	l := New(n.client, "demo")
	foreign := map[string]map[string]string{
		"karpenter v1.1": {ClusterTagKey("demo"): "owned", TagEKSClusterName: "demo", KarpenterTagNodePool: "default",
			KarpenterTagNodeClass: "default", KarpenterTagNodeClaim: "default-x7k2p"},
		"karpenter v1.0": {ClusterTagKey("demo"): "owned", KarpenterTagNodePool: "default",
			KarpenterTagNodeClass: "default", KarpenterTagNodeClaim: "default-x7k2p"},
		"managed node group": {ClusterTagKey("demo"): "owned", TagEKSClusterName: "demo", "eks:nodegroup-name": "system"},
		"other cluster":      {TagCluster: "other", TagNodePool: "default", TagNodeClaim: "default-x7k2p"},
	}
	for _, tags := range foreign {
		runTagged(t, n, tags)
	}
	all, err := l.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, all, "no foreign instance is listed")
	_, found, err := l.FindByClaim(ctx, "default-x7k2p")
	require.NoError(t, err)
	assert.False(t, found, "a foreign instance with the same claim tag is not ours")

	own, err := l.Launch(ctx, n.request("default-x7k2p"))
	require.NoError(t, err)
	all, err = l.List(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, own.ID, all[0].ID)
	assert.False(t, KarpenterCollectsInstance(all[0].Tags, "demo"), "Karpenter's garbage collection would list %v", all[0].Tags)
	for _, k := range []string{KarpenterTagNodeClass, KarpenterTagNodeClaim, TagEKSClusterName} {
		assert.NotContains(t, all[0].Tags, k)
	}
}

func TestLiveByID(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	l := New(n.client, "demo")
	a := runTagged(t, n, map[string]string{TagCluster: "demo"})
	b := runTagged(t, n, map[string]string{TagCluster: "demo"})
	require.NoError(t, l.Terminate(ctx, b))

	got, err := l.LiveByID(ctx, []string{a, b, "i-0123456789abcdef0"})
	require.NoError(t, err)
	require.Len(t, got, 1, "a terminated instance and an unknown id are not live")
	assert.Equal(t, a, got[0].ID)

	got, err = l.LiveByID(ctx, []string{"i-0123456789abcdef0"})
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = l.LiveByID(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}
