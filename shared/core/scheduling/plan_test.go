package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func TestPlanLookups(t *testing.T) {
	a, b, c := &corev1.Pod{}, &corev1.Pod{}, &corev1.Pod{}
	p := &Plan{
		NewClaims:     []ClaimPlan{{Pods: []*corev1.Pod{a}}},
		ExistingNodes: []NodePlacement{{Name: "n1", Pods: []*corev1.Pod{b}}},
		TotalPrice:    1.1, LowerBound: 1.0,
	}
	assert.Equal(t, 0, p.ClaimFor(a))
	assert.Equal(t, -1, p.ClaimFor(b))
	assert.Equal(t, "n1", p.NodeFor(b))
	assert.Equal(t, "", p.NodeFor(c))
	assert.InDelta(t, 1.1, p.CostRatio(), 1e-9)
	assert.Equal(t, 1.0, (&Plan{}).CostRatio())
}
