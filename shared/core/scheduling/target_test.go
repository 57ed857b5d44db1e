package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func pendingClass(n int, cpu, memGiB int64) *podClass {
	c := &podClass{requests: Resources{CPU: cpu, Memory: memGiB << 30, Pods: 1}}
	for range n {
		c.pods = append(c.pods, &corev1.Pod{})
	}
	return c
}

func TestSimulateFillMixesShapes(t *testing.T) {
	node := sizedCandidate("n", 8, 16, 1, "a")
	cpuHeavy := pendingClass(10, 2000, 1)
	memHeavy := pendingClass(10, 500, 4)
	got := simulateFill(node, []*podClass{cpuHeavy, memHeavy}, []int{10, 10})
	// Best packing: 3 cpu-heavy (6 CPU, 3Gi) + 3 memory-heavy (1.5 CPU, 12Gi) = 7.5 CPU, 15Gi.
	assert.Equal(t, Resources{CPU: 7500, Memory: 15 << 30, Pods: 6}, got)
	assert.Equal(t, 0, cpuHeavy.next, "simulation places nothing")
}

func TestSimulateFillRespectsLimits(t *testing.T) {
	node := sizedCandidate("n", 8, 16, 1, "a")
	cpuHeavy := pendingClass(10, 2000, 1)
	memHeavy := pendingClass(10, 500, 4)
	// Only one memory-heavy pod may go to this node's domain: the rest of the room goes to CPU.
	got := simulateFill(node, []*podClass{cpuHeavy, memHeavy}, []int{10, 1})
	assert.Equal(t, Resources{CPU: 6500, Memory: 7 << 30, Pods: 4}, got)
}

func TestChooseTargetPrefersTheTypeThatPacksWhole(t *testing.T) {
	// Pods of 3 CPU: "odd" (4 CPU) holds one and strands a quarter; "even" (6 CPU) holds two. Per CPU
	// "odd" is cheaper, per pod "even" is.
	odd := sizedCandidate("odd", 4, 64, 0.40, "a")
	even := sizedCandidate("even", 6, 64, 0.66, "a")
	c := pendingClass(10, 3000, 1)
	c.steps = []classStep{{}}
	s := &solver{pending: []*podClass{c}, demand: demand{cpu: 30000, memory: float64(10 << 30), pods: 10}, targets: map[targetKey]cachedTarget{}}
	ps := &poolState{NodePool: NodePool{Name: "p"}}
	got := s.chooseTarget(ps, &admission{front: []*candidate{odd, even}, fit: []*candidate{odd, even}}, c, &c.steps[0])
	assert.Equal(t, "even", got.it.Name)
}
