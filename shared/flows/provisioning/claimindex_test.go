package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

func TestClaimIndexFindsTheClaimStandingForANode(t *testing.T) {
	x := NewClaimIndex([]state.Claim{
		{Name: "launched", ProviderID: "aws:///us-east-1a/i-1"},
		{Name: "from-instance", InstanceID: "i-2", Zone: "us-east-1b"},
		{Name: "registered", NodeName: "ip-10-0-0-3", ProviderID: "aws:///us-east-1a/i-3"},
		{Name: "pending", NodeName: "ip-10-0-0-4"},
		{Name: "gone", ProviderID: "aws:///us-east-1a/i-5", Lifecycle: state.Deleted},
	})
	node := func(name, providerID string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	}
	for name, c := range map[string]struct {
		node  *corev1.Node
		claim string
	}{
		"by the provider id the launch recorded":            {node("ip-a", "aws:///us-east-1a/i-1"), "launched"},
		"by the instance id and zone":                       {node("ip-b", "aws:///us-east-1b/i-2"), "from-instance"},
		"by name, the Node has no provider id yet":          {node("ip-10-0-0-3", ""), "registered"},
		"by name, the claim recorded no provider id":        {node("ip-10-0-0-4", "aws:///us-east-1a/i-4"), "pending"},
		"Karpenter's Node with a recorded name, not the id": {node("ip-10-0-0-3", "aws:///us-east-1a/i-k"), ""},
		"Karpenter's Node":                                  {node("ip-k", "aws:///us-east-1a/i-k"), ""},
		"the Node of a deleted claim is no longer ours":     {node("ip-e", "aws:///us-east-1a/i-5"), ""},
	} {
		got, ok := x.Of(c.node)
		assert.Equal(t, c.claim != "", ok, name)
		assert.Equal(t, c.claim, got.Name, name)
	}
}
