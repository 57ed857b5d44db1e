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

func TestKarpenterGarbageCollectionCriteria(t *testing.T) {
	nodewright := map[string]string{ClusterTagKey("demo"): "owned", TagCluster: "demo", KarpenterTagNodePool: "default"}
	for name, tc := range map[string]struct {
		tags    map[string]string
		collect bool
	}{
		"karpenter v1.1": {map[string]string{TagEKSClusterName: "demo", KarpenterTagNodePool: "a", KarpenterTagNodeClass: "b"}, true},
		"karpenter v1.0": {map[string]string{ClusterTagKey("demo"): "owned", KarpenterTagNodePool: "a", KarpenterTagNodeClass: "b"}, true},
		"another cluster's v1.1": {map[string]string{TagEKSClusterName: "other", KarpenterTagNodePool: "a",
			KarpenterTagNodeClass: "b"}, false},
		"nodewright's":                    {nodewright, false},
		"node pool and class, no cluster": {map[string]string{KarpenterTagNodePool: "a", KarpenterTagNodeClass: "b"}, false},
		"another cluster's v1.0 key":      {map[string]string{ClusterTagKey("other"): "owned", KarpenterTagNodePool: "a", KarpenterTagNodeClass: "b"}, false},
		"no node class":                   {map[string]string{TagEKSClusterName: "demo", ClusterTagKey("demo"): "owned", KarpenterTagNodePool: "a"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.collect, KarpenterCollectsInstance(tc.tags, "demo"))
		})
	}
	assert.True(t, KarpenterDeletesTemplate(map[string]string{TagEKSClusterName: "demo"}, "demo"))
	assert.True(t, KarpenterDeletesTemplate(map[string]string{KarpenterTagTemplateCluster: "demo"}, "demo"))
	assert.False(t, KarpenterDeletesTemplate(map[string]string{TagEKSClusterName: "other"}, "demo"))
	assert.False(t, KarpenterDeletesTemplate(nodewright, "demo"))
}

// specTags is each resource type a fleet input tags, with its tags.
func specTags(in *ec2.CreateFleetInput) map[ec2types.ResourceType]map[string]string {
	out := map[ec2types.ResourceType]map[string]string{}
	for _, s := range in.TagSpecifications {
		tags := map[string]string{}
		for _, tag := range s.Tags {
			tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		out[s.ResourceType] = tags
	}
	return out
}

// fleetInputs are the CreateFleet inputs of a single launch and of a batch for req.
func fleetInputs(t *testing.T, req Request) map[string]*ec2.CreateFleetInput {
	t.Helper()
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{fleetError("InsufficientInstanceCapacity", "c5.large", "subnet-a")}}}
	_, _ = New(f, "demo").Launch(context.Background(), req)
	single := f.last
	_, _ = New(f, "demo").LaunchBatch(context.Background(), BatchRequest{Request: fresh(req), Batch: "batch-abc", Claims: []string{"a", "b"}})
	require.NotNil(t, single)
	require.NotSame(t, single, f.last)
	return map[string]*ec2.CreateFleetInput{"single": single, "batch": f.last}
}

// Cost allocation reports split by karpenter.sh/nodepool, as they do for Karpenter's instances: every
// resource a launch creates carries it, with the claim's NodePool, whatever the node class's tags say.
func TestLaunchesTagTheirNodePoolForCostAllocation(t *testing.T) {
	req := request()
	req.Tags = map[string]string{KarpenterTagNodePool: "spoofed", "team": "platform"}
	for name, in := range fleetInputs(t, req) {
		t.Run(name, func(t *testing.T) {
			byType := specTags(in)
			for _, rt := range []ec2types.ResourceType{ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeFleet} {
				assert.Equal(t, "default", byType[rt][KarpenterTagNodePool], "%s", rt)
				assert.Equal(t, "default", byType[rt][TagNodePool], "%s", rt)
				assert.Equal(t, "platform", byType[rt]["team"], "%s", rt)
			}
		})
	}
}

// However the node class is tagged, no launch carries the tags Karpenter's garbage collection terminates
// an instance by: adding karpenter.k8s.aws/ec2nodeclass (or eks:eks-cluster-name) to what Nodewright
// tags would make Karpenter terminate every Nodewright instance when both run in one cluster.
func TestNoLaunchCarriesKarpentersGarbageCollectionTags(t *testing.T) {
	req := request()
	req.Tags = map[string]string{KarpenterTagNodeClass: "default", TagEKSClusterName: "demo", KarpenterTagNodeClaim: "x",
		KarpenterTagTemplateCluster: "demo"}
	for name, in := range fleetInputs(t, req) {
		t.Run(name, func(t *testing.T) {
			byType := specTags(in)
			require.Len(t, byType, 3)
			for rt, tags := range byType {
				assert.False(t, KarpenterCollectsInstance(tags, "demo"), "%s tags %v", rt, tags)
				assert.False(t, KarpenterDeletesTemplate(tags, "demo"), "%s tags %v", rt, tags)
				for _, k := range []string{KarpenterTagNodeClass, TagEKSClusterName, KarpenterTagNodeClaim, KarpenterTagTemplateCluster} {
					assert.NotContains(t, tags, k, "%s", rt)
				}
			}
		})
	}
}
