package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/apis"
	"github.com/nodewright/nodewright/shared/state"
)

// TestStaticStatusOfCountsEveryPoolInOnePass: StaticCounts agrees with CountStatic pool by pool, and
// StaticStatusOf answers only for a static NodePool, with its replicas and current nodes.
func TestStaticStatusOfCountsEveryPoolInOnePass(t *testing.T) {
	claims := []state.Claim{
		{Name: "a", NodePool: "fixed", Lifecycle: state.Initialized},
		{Name: "b", NodePool: "fixed", Lifecycle: state.Pending},
		{Name: "c", NodePool: "fixed", Lifecycle: state.Draining},
		{Name: "d", NodePool: "fixed", Lifecycle: state.Deleted},
		{Name: "e", NodePool: "other", Lifecycle: state.Initialized},
	}
	counts := StaticCounts(claims)
	assert.Equal(t, CountStatic(claims, "fixed"), counts["fixed"])
	assert.Equal(t, CountStatic(claims, "other"), counts["other"])
	assert.Equal(t, StaticCount{Active: 2, Deleting: 1}, counts["fixed"])

	replicas := int64(3)
	np := &apis.NodePool{}
	np.Name = "fixed"
	_, ok := StaticStatusOf(np, counts)
	assert.False(t, ok, "a dynamic pool has no static status")
	np.Spec.Replicas = &replicas
	s, ok := StaticStatusOf(np, counts)
	assert.True(t, ok)
	assert.Equal(t, StaticStatus{Replicas: 3, Nodes: 2, Deleting: 1}, s)
}
