package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestLimits(t *testing.T) {
	l := newLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), resourceNodes: resource.MustParse("2")})
	node := Resources{CPU: 4000, Memory: 16 << 30, Pods: 58}
	assert.Empty(t, l.exceededBy(node), "memory and pods are not capped")
	l.subtract(node)
	assert.Empty(t, l.exceededBy(node))
	l.subtract(node)
	assert.Equal(t, []string{"cpu", "nodes"}, l.exceededBy(node), "2 CPU and 0 nodes remain")
	l.add(node)
	assert.Empty(t, l.exceededBy(node))

	unlimited := newLimits(nil)
	unlimited.subtract(node)
	assert.Empty(t, unlimited.exceededBy(Resources{CPU: 1 << 40}))
}
