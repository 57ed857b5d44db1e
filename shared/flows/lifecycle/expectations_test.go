package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestExpectedFor(t *testing.T) {
	pool := scheduling.NodePool{Name: "gpu",
		Labels:        map[string]string{"team": "ml", scheduling.LabelEC2NodeClass: "default"},
		Taints:        []corev1.Taint{dedicated},
		StartupTaints: []corev1.Taint{cilium},
		Requirements: []scheduling.NodeSelectorRequirement{
			{Key: "tier", Operator: scheduling.OpIn, Values: []string{"batch"}},
			{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"spot", "on-demand"}},
			{Key: scheduling.LabelHostname, Operator: scheduling.OpIn, Values: []string{"pinned"}},
		}}
	c := state.Claim{Name: "gpu-abcde", NodePool: "gpu", NodeClass: "default", InstanceID: "i-0abc", Zone: "us-east-1a",
		InstanceType: "g5.xlarge", CapacityType: "spot",
		Requests: map[string]string{"cpu": "3", "memory": "4Gi", "hugepages-2Mi": "1Gi", "nvidia.com/gpu": "1", "example.com/zero": "0"}}

	exp := ExpectedFor(c, pool)
	assert.Equal(t, "aws:///us-east-1a/i-0abc", exp.ProviderID, "built from the instance when the claim has none")
	assert.Equal(t, map[string]string{"team": "ml", "tier": "batch", "karpenter.sh/nodepool": "gpu",
		"karpenter.k8s.aws/ec2nodeclass": "default", "node.kubernetes.io/instance-type": "g5.xlarge",
		"topology.kubernetes.io/zone": "us-east-1a", "karpenter.sh/capacity-type": "spot"}, exp.Labels)
	assert.Equal(t, []corev1.Taint{dedicated}, exp.Taints)
	assert.Equal(t, []corev1.Taint{cilium}, exp.StartupTaints)
	assert.Equal(t, []corev1.ResourceName{"nvidia.com/gpu"}, exp.ExtendedResources)

	gone := ExpectedFor(state.Claim{NodePool: "deleted", ProviderID: "aws:///us-east-1b/i-0def"}, scheduling.NodePool{})
	assert.Equal(t, "aws:///us-east-1b/i-0def", gone.ProviderID)
	assert.Equal(t, map[string]string{"karpenter.sh/nodepool": "deleted"}, gone.Labels, "a NodePool no longer configured still names itself")
	assert.Empty(t, gone.Taints)
}

func TestInstanceID(t *testing.T) {
	for in, want := range map[string]string{
		"aws:///us-east-1a/i-0abc": "i-0abc", "aws:///i-0abc": "i-0abc", "": "", "kind://docker/kind/node": "",
		"aws:///us-east-1a/fargate-ip-10": "",
	} {
		assert.Equal(t, want, instanceID(in), in)
	}
}

// A claim recorded with its minValues outcome annotates its Node as Karpenter annotates a NodeClaim's
// (karpenter.sh/nodeclaim-min-values-relaxed "true" or "false"); a claim recorded before that was kept
// annotates nothing.
func TestExpectedForAnnotatesWhetherMinValuesWereRelaxed(t *testing.T) {
	pool := scheduling.NodePool{Name: "default", Annotations: map[string]string{"team": "ml"}}
	for relaxed, want := range map[bool]string{true: "true", false: "false"} {
		c := state.Claim{NodePool: "default", MinValuesRelaxed: &relaxed}
		exp := ExpectedFor(c, pool)
		assert.Equal(t, map[string]string{"team": "ml", "karpenter.sh/nodeclaim-min-values-relaxed": want}, exp.Annotations)
	}
	assert.Equal(t, map[string]string{"team": "ml"}, ExpectedFor(state.Claim{NodePool: "default"}, pool).Annotations)
	assert.Equal(t, map[string]string{"team": "ml"}, pool.Annotations, "the NodePool's own annotations are not changed")
}

// A claim a NodeOverlay priced or gave capacity annotates its Node as Karpenter annotates the NodeClaim
// (karpenter.sh/price-overlay-applied, karpenter.sh/capacity-overlay-applied "true"); others do not.
func TestExpectedForAnnotatesAppliedOverlays(t *testing.T) {
	pool := scheduling.NodePool{Name: "default"}
	exp := ExpectedFor(state.Claim{NodePool: "default", PriceOverlayApplied: true}, pool)
	assert.Equal(t, map[string]string{"karpenter.sh/price-overlay-applied": "true"}, exp.Annotations)
	exp = ExpectedFor(state.Claim{NodePool: "default", PriceOverlayApplied: true, CapacityOverlayApplied: true}, pool)
	assert.Equal(t, map[string]string{"karpenter.sh/price-overlay-applied": "true", "karpenter.sh/capacity-overlay-applied": "true"}, exp.Annotations)
	assert.Empty(t, ExpectedFor(state.Claim{NodePool: "default"}, pool).Annotations)
}
