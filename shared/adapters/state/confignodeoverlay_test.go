package state

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// A NodeOverlay is stored as a configuration item of its own kind, without a drift hash (it changes what
// the scheduler believes of instance types, not what a node is), and reads back as it was written.
func TestConfigItemsFromStoresNodeOverlays(t *testing.T) {
	objs := decodeValid(t, `apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: savings-plan}
spec:
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "-30%"
  weight: 10
`)
	items, err := ConfigItemsFrom(objs)
	require.NoError(t, err)
	require.Len(t, items, 1)
	it := items[0]
	assert.Equal(t, KindNodeOverlay, it.Kind)
	assert.Equal(t, "savings-plan", it.Name)
	assert.Empty(t, it.DriftHash)
	assert.NotEmpty(t, it.SpecHash)
	var back apis.NodeOverlay
	require.NoError(t, json.Unmarshal([]byte(it.Spec), &back))
	assert.Equal(t, "-30%", *back.Spec.PriceAdjustment)
	assert.Equal(t, int32(10), *back.Spec.Weight)
}
