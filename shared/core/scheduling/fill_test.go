package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func TestFillMixesShapes(t *testing.T) {
	node := sizedCandidate("n", 8, 16, 1, "a")
	ps := &poolState{NodePool: NodePool{Name: "p"}}
	cpuHeavy := pendingClass(10, 2000, 1)
	memHeavy := pendingClass(10, 500, 4)
	for _, c := range []*podClass{cpuHeavy, memHeavy} {
		c.steps = []classStep{{}}
		for i := range c.pods {
			c.pods[i] = &corev1.Pod{}
		}
	}
	s := &solver{pending: []*podClass{cpuHeavy, memHeavy}, topo: newTopology(nil)}
	cl := &claim{pool: ps, reqs: Requirements{}, candidates: []*candidate{node}, target: node, sigs: map[string]bool{}}
	cl.commit(cpuHeavy, &cpuHeavy.steps[0], cpuHeavy.pods[0], cpuHeavy.requests, cl.reqs, cl.candidates, node)
	cpuHeavy.next = 1
	s.fill(cl)
	// 3 CPU-heavy (6 CPU, 3Gi) and 3 memory-heavy (1.5 CPU, 12Gi) fill 8 CPU / 16Gi best.
	assert.Equal(t, 3, cpuHeavy.next)
	assert.Equal(t, 3, memHeavy.next)
	assert.Equal(t, Resources{CPU: 7500, Memory: 15 << 30, Pods: 6}, cl.requests)
}
