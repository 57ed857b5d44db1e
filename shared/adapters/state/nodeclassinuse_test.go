package state

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const twoClassManifests = applyManifests + `---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

// withoutClass is items minus the EC2NodeClass name.
func withoutClass(items []ConfigItem, name string) []ConfigItem {
	var out []ConfigItem
	for _, it := range items {
		if it.Kind != KindEC2NodeClass || it.Name != name {
			out = append(out, it)
		}
	}
	return out
}

func TestApplyRefusesToRemoveAnEC2NodeClassClaimsUse(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	items, err := ConfigItemsFrom(decodeValid(t, twoClassManifests))
	require.NoError(t, err)
	_, err = s.ApplyConfig(ctx, items, true)
	require.NoError(t, err)
	for _, c := range []Claim{
		{Name: "gpu-a", NodePool: "default", NodeClass: "gpu"},
		{Name: "gpu-b", NodePool: "default", NodeClass: "gpu"},
		{Name: "gpu-gone", NodePool: "default", NodeClass: "gpu"},
		{Name: "default-a", NodePool: "default", NodeClass: "default"},
	} {
		_, err := s.CreateClaim(ctx, c)
		require.NoError(t, err)
	}
	_, err = s.UpdateClaim(ctx, "gpu-gone", func(c *Claim) error { c.Lifecycle = Deleted; return nil })
	require.NoError(t, err)

	// The NodePool changes too; nothing of the change may be written.
	changed := decodeValid(t, twoClassManifests)
	changed.NodePools[0].Spec.Template.Spec.Requirements[0].Values = []string{"on-demand"}
	changedItems, err := ConfigItemsFrom(changed)
	require.NoError(t, err)
	before, err := s.ListConfig(ctx, "")
	require.NoError(t, err)

	res, err := s.ApplyConfig(ctx, withoutClass(changedItems, "gpu"), true)
	require.ErrorIs(t, err, ErrNodeClassInUse)
	assert.ErrorContains(t, err, "EC2NodeClass gpu: 2 NodeClaims use it", "the deleted claim does not count")
	assert.Empty(t, res.Updated)
	assert.Empty(t, res.Deleted)
	after, err := s.ListConfig(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing applied")

	_, err = s.ApplyConfig(ctx, withoutClass(withoutClass(items, "gpu"), "default"), true)
	assert.ErrorContains(t, err, "EC2NodeClass default: 1 NodeClaim uses it; EC2NodeClass gpu: 2 NodeClaims use it")

	res, err = s.ApplyConfig(ctx, withoutClass(items, "gpu"), false)
	require.NoError(t, err, "without prune nothing is removed, so nothing is refused")
	assert.Empty(t, res.Deleted)

	for _, name := range []string{"gpu-a", "gpu-b"} {
		_, err = s.UpdateClaim(ctx, name, func(c *Claim) error { c.Lifecycle = Deleted; return nil })
		require.NoError(t, err)
	}
	res, err = s.ApplyConfig(ctx, withoutClass(items, "gpu"), true)
	require.NoError(t, err, "once its nodes are gone the class goes")
	assert.Equal(t, []string{"EC2NodeClass/gpu"}, res.Deleted)
}

// failingClaimList fails the claim listing only (a Query of a live claim shard).
type failingClaimList struct{ *dynamodb.Client }

func (f failingClaimList) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if v, ok := in.ExpressionAttributeValues[":pk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(v.Value, liveClaimPrefix) {
		return nil, errors.New("throttled")
	}
	return f.Client.Query(ctx, in, optFns...)
}

func TestApplyRefusesWhenTheClaimsCannotBeListed(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	items, err := ConfigItemsFrom(decodeValid(t, twoClassManifests))
	require.NoError(t, err)
	_, err = s.ApplyConfig(ctx, items, true)
	require.NoError(t, err)

	failing := New(failingClaimList{s.db.(*dynamodb.Client)}, "state")
	res, err := failing.ApplyConfig(ctx, withoutClass(items, "gpu"), true)
	assert.ErrorContains(t, err, "checking that no NodeClaim uses the EC2NodeClasses removed (gpu), nothing applied")
	assert.Empty(t, res.Deleted)
	_, err = s.GetConfig(ctx, KindEC2NodeClass, "gpu")
	require.NoError(t, err, "the class is still stored")

	res, err = failing.ApplyConfig(ctx, items, true)
	require.NoError(t, err, "a configuration that removes no class does not need the claims")
	assert.Len(t, res.Unchanged, 3)
}

func TestNodeClassesInUse(t *testing.T) {
	assert.Equal(t, map[string]int{"a": 2, "b": 1}, NodeClassesInUse([]Claim{
		{NodeClass: "a", Lifecycle: Pending}, {NodeClass: "a", Lifecycle: Terminating}, {NodeClass: "b", Lifecycle: Draining},
		{NodeClass: "b", Lifecycle: Deleted}, {NodeClass: "", Lifecycle: Launched},
	}))
}
