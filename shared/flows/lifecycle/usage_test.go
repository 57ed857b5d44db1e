package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func usageNode(name, pool, cpu, memory string, deleting bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-" + name},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("58")}}}
	if pool != "" {
		n.Labels[scheduling.LabelNodePool] = pool
	}
	if deleting {
		now := metav1.Now()
		n.DeletionTimestamp = &now
	}
	return n
}

func TestUsageSumsCapacityAgainstLimits(t *testing.T) {
	pools := map[string]scheduling.NodePool{
		"default": {Name: "default", Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), "nodes": resource.MustParse("2")}},
		"gpu":     {Name: "gpu"},
		"frozen":  {Name: "frozen", Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}},
	}
	nodes := []*corev1.Node{
		usageNode("a", "default", "8", "16Gi", false),
		usageNode("b", "default", "4", "8Gi", false),
		usageNode("c", "default", "8", "16Gi", false),
		usageNode("going", "default", "64", "256Gi", true),
		usageNode("unmanaged", "", "96", "384Gi", false),
		usageNode("f", "frozen", "2", "4Gi", false),
		usageNode("karpenters", "default", "32", "64Gi", false),
	}
	var claims []state.Claim
	for _, n := range nodes {
		if n.Name != "karpenters" {
			claims = append(claims, state.Claim{Name: "claim-" + n.Name, NodePool: n.Labels[scheduling.LabelNodePool],
				Lifecycle: state.Initialized, ProviderID: n.Spec.ProviderID})
		}
	}
	got := Usage(nodes, claims, pools)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"default", "frozen", "gpu"}, []string{got[0].NodePool, got[1].NodePool, got[2].NodePool})

	def := got[0]
	assert.Equal(t, 3, def.Nodes, "a Node being deleted, an unmanaged Node and Karpenter's Node of the same pool name do not count")
	cpu, mem, n := def.Used[corev1.ResourceCPU], def.Used[corev1.ResourceMemory], def.Used["nodes"]
	assert.Equal(t, "20", cpu.String())
	assert.Equal(t, "40Gi", mem.String())
	assert.Equal(t, int64(3), n.Value())
	assert.InDelta(t, 1.25, def.Fraction["cpu"], 1e-9)
	assert.InDelta(t, 1.5, def.Fraction["nodes"], 1e-9)
	assert.Equal(t, []string{"cpu", "nodes"}, def.Exceeded, "a limit lowered below usage shows")

	assert.Equal(t, []string{"cpu"}, got[1].Exceeded, "a zero limit with Nodes is exceeded")
	assert.Zero(t, got[2].Nodes)
	assert.Nil(t, got[2].Fraction, "no limits, no fractions")
	assert.Empty(t, got[2].Exceeded)
}
