package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOrderNodePools(t *testing.T) {
	got := orderNodePools([]NodePool{{Name: "a", Weight: 10}, {Name: "b"}, {Name: "c", Weight: 10}, {Name: "d", Weight: 50}})
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"d", "c", "a", "b"}, names)
}

func TestNodePoolRequirements(t *testing.T) {
	reqs, err := nodePoolRequirements(NodePool{Name: "gpu", Labels: map[string]string{"team": "ml"},
		Requirements: []NodeSelectorRequirement{{Key: "beta.kubernetes.io/arch", Operator: OpIn, Values: []string{"amd64"}}}})
	require.NoError(t, err)
	assert.Equal(t, "karpenter.sh/nodepool In [gpu], kubernetes.io/arch In [amd64], team In [ml]", reqs.String())

	_, err = nodePoolRequirements(NodePool{Name: "bad", Requirements: []NodeSelectorRequirement{{Key: "k", Operator: "Sometimes"}}})
	assert.ErrorContains(t, err, "nodepool bad requirements")
}
