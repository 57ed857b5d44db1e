package state

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

const applyManifests = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

func decodeValid(t *testing.T, yaml string) apis.Objects {
	t.Helper()
	objs, err := apis.Decode("test.yaml", []byte(yaml))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	return objs
}

func TestApplyConfigIsIdempotentAndVersioned(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	items, err := ConfigItemsFrom(decodeValid(t, applyManifests))
	require.NoError(t, err)
	require.Len(t, items, 2)
	assert.Equal(t, KindEC2NodeClass, items[0].Kind, "items are sorted by kind and name")

	res, err := s.ApplyConfig(ctx, items, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"EC2NodeClass/default", "NodePool/default"}, res.Created)

	res, err = s.ApplyConfig(ctx, items, true)
	require.NoError(t, err)
	assert.Empty(t, res.Created)
	assert.Empty(t, res.Updated)
	assert.Len(t, res.Unchanged, 2, "applying the same manifests again writes nothing")

	// A requirement change leaves the drift hash alone but is still an update.
	changed := decodeValid(t, applyManifests)
	changed.NodePools[0].Spec.Template.Spec.Requirements[0].Values = []string{"on-demand"}
	items2, err := ConfigItemsFrom(changed)
	require.NoError(t, err)
	res, err = s.ApplyConfig(ctx, items2[1:], true) // only the NodePool: the EC2NodeClass is pruned
	require.NoError(t, err)
	assert.Equal(t, []string{"NodePool/default"}, res.Updated)
	assert.Equal(t, []string{"EC2NodeClass/default"}, res.Deleted)

	np, err := s.GetConfig(ctx, KindNodePool, "default")
	require.NoError(t, err)
	assert.EqualValues(t, 2, np.Version)
	assert.Equal(t, items[1].DriftHash, np.DriftHash, "requirements are not part of the drift hash")
	assert.NotEqual(t, items[1].SpecHash, np.SpecHash)

	var back apis.NodePool
	require.NoError(t, json.Unmarshal([]byte(np.Spec), &back))
	assert.Equal(t, []string{"on-demand"}, back.Spec.Template.Spec.Requirements[0].Values)
	require.NotNil(t, back.Spec.Disruption.Budgets, "the stored spec is defaulted")
}
