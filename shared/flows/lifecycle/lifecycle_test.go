package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	unregistered = corev1.Taint{Key: UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}
	dedicated    = corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	cilium       = corev1.Taint{Key: "node.cilium.io/agent-not-ready", Effect: corev1.TaintEffectNoExecute}
)

func expected() Expected {
	return Expected{
		ProviderID:    "aws:///us-east-1a/i-0abc",
		Labels:        map[string]string{"karpenter.sh/nodepool": "gpu", "team": "ml"},
		Taints:        []corev1.Taint{dedicated},
		StartupTaints: []corev1.Taint{cilium},
	}
}

func node(name, providerID string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	if labels == nil {
		labels = map[string]string{}
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: map[string]string{}},
		Spec: corev1.NodeSpec{ProviderID: providerID, Taints: taints}}
}

func TestRegister(t *testing.T) {
	t.Run("not joined yet", func(t *testing.T) {
		r := Register(expected(), []*corev1.Node{node("other", "aws:///us-east-1a/i-0zzz", nil)})
		assert.Nil(t, r.Node)
		assert.Equal(t, "NodeNotFound", r.Reason)
	})
	t.Run("two nodes claim the instance", func(t *testing.T) {
		r := Register(expected(), []*corev1.Node{node("b", "aws:///us-east-1a/i-0abc", nil), node("a", "aws:///us-east-1a/i-0abc", nil)})
		assert.Nil(t, r.Node)
		assert.Equal(t, "MultipleNodesFound: [a b]", r.Reason)
	})
	t.Run("a fresh node gets labels and taints and loses the unregistered taint", func(t *testing.T) {
		n := node("ip-10-0-0-1", "aws:///us-east-1a/i-0abc", map[string]string{"team": "ml"}, unregistered)
		r := Register(expected(), []*corev1.Node{n})
		assert.Same(t, n, r.Node)
		assert.Empty(t, r.Warnings)
		assert.Equal(t, map[string]string{"karpenter.sh/nodepool": "gpu", RegisteredLabel: "true"}, r.Patch.SetLabels)
		assert.Equal(t, []corev1.Taint{dedicated, cilium}, r.Patch.AddTaints)
		assert.Equal(t, []string{UnregisteredTaintKey}, r.Patch.RemoveTaints)
	})
	t.Run("after the patch there is nothing left to do", func(t *testing.T) {
		n := node("ip-10-0-0-1", "aws:///us-east-1a/i-0abc",
			map[string]string{"team": "ml", "karpenter.sh/nodepool": "gpu", RegisteredLabel: "true"}, dedicated)
		r := Register(expected(), []*corev1.Node{n})
		assert.True(t, r.Patch.Empty(), "registration is idempotent; startup taints removed since are not put back: %+v", r.Patch)
	})
	t.Run("a node that joined without the unregistered taint is flagged", func(t *testing.T) {
		r := Register(expected(), []*corev1.Node{node("n", "aws:///us-east-1a/i-0abc", nil)})
		assert.Len(t, r.Warnings, 1)
		assert.Contains(t, r.Warnings[0], "UnregisteredTaintMissing")
	})
	t.Run("the do-not-sync-taints label leaves taints alone", func(t *testing.T) {
		n := node("n", "aws:///us-east-1a/i-0abc", map[string]string{DoNotSyncTaintsLabel: "true"}, unregistered)
		r := Register(expected(), []*corev1.Node{n})
		assert.Empty(t, r.Patch.AddTaints)
		assert.Equal(t, []string{UnregisteredTaintKey}, r.Patch.RemoveTaints)
	})
	t.Run("do-not-sync-taints is a label, not an annotation", func(t *testing.T) {
		n := node("n", "aws:///us-east-1a/i-0abc", nil, unregistered)
		n.Annotations[DoNotSyncTaintsLabel] = "true"
		r := Register(expected(), []*corev1.Node{n})
		assert.NotEmpty(t, r.Patch.AddTaints)
	})
}

func TestInitialize(t *testing.T) {
	readyNode := func(taints ...corev1.Taint) *corev1.Node {
		n := node("n", "aws:///us-east-1a/i-0abc", map[string]string{RegisteredLabel: "true"}, taints...)
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.Allocatable = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		return n
	}
	gpu := expected()
	gpu.ExtendedResources = []corev1.ResourceName{"nvidia.com/gpu"}

	notReady := readyNode()
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	noGPU := readyNode()
	noGPU.Status.Allocatable = nil

	cases := []struct {
		name   string
		node   *corev1.Node
		reason string
	}{
		{"not ready", notReady, "NodeNotReady"},
		{"startup taint still there", readyNode(cilium), "StartupTaintsExist: node.cilium.io/agent-not-ready:NoExecute"},
		{"ephemeral taint still there", readyNode(corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}), "KnownEphemeralTaintsExist: node.kubernetes.io/not-ready"},
		{"device plugin not registered", noGPU, "ResourceNotRegistered: nvidia.com/gpu"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Initialize(gpu, tc.node)
			assert.False(t, got.Initialized)
			assert.Equal(t, tc.reason, got.Reason)
			assert.True(t, got.Patch.Empty())
		})
	}
	got := Initialize(gpu, readyNode(dedicated))
	assert.True(t, got.Initialized, "the NodePool's own taints do not hold initialization")
	assert.Equal(t, map[string]string{InitializedLabel: "true"}, got.Patch.SetLabels)
	done := readyNode()
	done.Labels[InitializedLabel] = "true"
	assert.True(t, Initialize(gpu, done).Patch.Empty(), "initialized once, nothing more to do")
}
