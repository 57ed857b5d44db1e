package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func boundTo(name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	p.Status.Phase = corev1.PodRunning
	for _, m := range mutate {
		m(p)
	}
	return p
}

func TestDisruptedNodesAndReschedulablePods(t *testing.T) {
	now := metav1.Now()
	snap := &kube.Snapshot{Nodes: []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "tainted"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-1",
			Taints: []corev1.Taint{apis.DisruptedNoScheduleTaint}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "draining-by-name"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "draining-by-provider"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-2"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "healthy"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-3"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other-taint"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: apis.DisruptedTaintKey, Effect: corev1.TaintEffectNoExecute}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "karpenters"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/i-k",
			Taints: []corev1.Taint{apis.DisruptedNoScheduleTaint}}},
	}}
	claims := []state.Claim{
		{Name: "t", Lifecycle: state.Initialized, ProviderID: "aws:///us-east-1a/i-1"},
		{Name: "a", Lifecycle: state.Draining, NodeName: "draining-by-name"},
		{Name: "b", Lifecycle: state.Draining, ProviderID: "aws:///us-east-1a/i-2"},
		{Name: "c", Lifecycle: state.Initialized, NodeName: "healthy", ProviderID: "aws:///us-east-1a/i-3"},
	}
	disrupted := disruptedNodes(snap, NewClaimIndex(claims))
	assert.Equal(t, map[string]bool{"tainted": true, "draining-by-name": true, "draining-by-provider": true}, disrupted,
		"Karpenter's tainted Node is Karpenter's to replace")

	app := boundTo("app", "tainted")
	other := boundTo("other", "draining-by-provider")
	snap.Bound = []*corev1.Pod{
		app, other,
		boundTo("stays", "healthy"),
		boundTo("daemon", "tainted", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds"}}
		}),
		boundTo("static", "tainted", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "Node", Name: "tainted"}}
		}),
		boundTo("mirror", "tainted", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
		}),
		boundTo("done", "tainted", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		boundTo("failed", "tainted", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
		boundTo("leaving", "tainted", func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
		boundTo("tolerates", "tainted", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: apis.DisruptedTaintKey, Operator: corev1.TolerationOpExists}}
		}),
		boundTo("tolerates-all", "draining-by-name", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
		}),
	}
	assert.Equal(t, []*corev1.Pod{app, other}, reschedulablePods(snap, disrupted))
	assert.Empty(t, reschedulablePods(snap, map[string]bool{}))

	var names []string
	for _, n := range withoutDisrupted(existingNodes(snap, NewClaimIndex(claims)), disrupted) {
		names = append(names, n.Node.Name)
	}
	assert.Equal(t, []string{"healthy", "other-taint", "karpenters"}, names, "disrupted Nodes are no capacity")
}

// TestDrainingClaimIsNotInFlight: a claim on its way out must not absorb the pods it is giving up.
func TestDrainingClaimIsNotInFlight(t *testing.T) {
	claims := []state.Claim{
		{Name: "booting", NodePool: "default", Lifecycle: state.Launched, Requests: map[string]string{"cpu": "2"}},
		{Name: "leaving", NodePool: "default", Lifecycle: state.Draining, Requests: map[string]string{"cpu": "2"}},
	}
	got := inFlightClaims(claims, joinedNodes{}, []scheduling.NodePool{{Name: "default"}}, nil)
	if assert.Len(t, got, 1) {
		assert.Equal(t, "booting", got[0].Name)
	}
}
