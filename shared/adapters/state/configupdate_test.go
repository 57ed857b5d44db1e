package state

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// staticPoolManifests is applyManifests' NodePool made static (three replicas).
const staticPoolManifests = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  replicas: 3
  limits: {nodes: 4}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
`

// TestApplyRefusesTogglingStaticAndDynamic: an apply that would turn a stored dynamic NodePool static, or
// a static one dynamic, writes nothing and names spec.replicas; changing replicas of a static pool is an
// ordinary update, and the stored item says the pool is static.
func TestApplyRefusesTogglingStaticAndDynamic(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	dynamic, err := ConfigItemsFrom(decodeValid(t, applyManifests))
	require.NoError(t, err)
	_, err = s.ApplyConfig(ctx, dynamic, false)
	require.NoError(t, err)

	static, err := ConfigItemsFrom(decodeValid(t, staticPoolManifests))
	require.NoError(t, err)
	require.True(t, static[0].StaticPool)
	_, err = s.ApplyConfig(ctx, static, false)
	var refused *UpdateRefusedError
	require.ErrorAs(t, err, &refused)
	require.Len(t, refused.Problems, 1)
	assert.Contains(t, refused.Problems[0], "NodePool/default: spec.replicas: Forbidden: Cannot transition NodePool between static")
	stored, err := s.GetConfig(ctx, KindNodePool, "default")
	require.NoError(t, err)
	assert.False(t, stored.StaticPool)
	assert.EqualValues(t, 1, stored.Version, "nothing was written")

	// Start again from a static pool: scaling it is an update, turning it dynamic is refused.
	s, _ = newStore(t)
	_, err = s.ApplyConfig(ctx, static, false)
	require.NoError(t, err)
	stored, err = s.GetConfig(ctx, KindNodePool, "default")
	require.NoError(t, err)
	assert.True(t, stored.StaticPool, "the item records that the pool is static")

	scaled := decodeValid(t, staticPoolManifests)
	scaled.NodePools[0].Spec.Replicas = ptrInt64(1)
	items, err := ConfigItemsFrom(scaled)
	require.NoError(t, err)
	res, err := s.ApplyConfig(ctx, items, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"NodePool/default"}, res.Updated)

	_, err = s.ApplyConfig(ctx, dynamic, false)
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, refused.Error(), "spec.replicas")
	var back apis.NodePool
	stored, err = s.GetConfig(ctx, KindNodePool, "default")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(stored.Spec), &back))
	assert.EqualValues(t, 1, *back.Spec.Replicas)
}

func ptrInt64(v int64) *int64 { return &v }

// TestStaticPoolWriteConditionRefusesToggling runs the CDK deployment's conditional write (the condition
// infra/config.go puts on its updateItem) against the table: a pool stored dynamic (written by apply,
// without the attribute) cannot be written static, one stored static cannot be written dynamic, and
// writing the same kind again, or a new pool, succeeds.
func TestStaticPoolWriteConditionRefusesToggling(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	write := func(name string, static bool) error {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                aws.String(s.table),
			Key:                      key(configPartition, KindNodePool+"#"+name),
			UpdateExpression:         aws.String("SET #static = :static ADD version :one"),
			ConditionExpression:      aws.String(StaticPoolWriteCondition(static)),
			ExpressionAttributeNames: map[string]string{"#pk": PartitionKey, "#static": StaticPoolAttr},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":static": &types.AttributeValueMemberBOOL{Value: static}, ":one": num(1)},
		})
		return err
	}
	var failed *types.ConditionalCheckFailedException
	dynamic, err := ConfigItemsFrom(decodeValid(t, applyManifests))
	require.NoError(t, err)
	_, err = s.ApplyConfig(ctx, dynamic, false)
	require.NoError(t, err)
	require.ErrorAs(t, write("default", true), &failed, "a pool apply stored dynamic cannot turn static")
	require.NoError(t, write("default", false))
	require.ErrorAs(t, write("default", true), &failed, "nor once the deployment recorded it dynamic")

	require.NoError(t, write("fixed", true), "a new pool may be static")
	require.NoError(t, write("fixed", true))
	require.ErrorAs(t, write("fixed", false), &failed, "a static pool cannot turn dynamic")
	stored, err := s.GetConfig(ctx, KindNodePool, "fixed")
	require.NoError(t, err)
	assert.True(t, stored.StaticPool)
}
