package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRepacker makes one kind of each class, with all its pods.
func testRepacker(options []repackOption, classes ...*podClass) (*repacker, []kindCount) {
	p := &repacker{options: options}
	var items []kindCount
	for i, c := range classes {
		p.kinds = append(p.kinds, repackKind{class: c, pods: c.pods})
		items = append(items, kindCount{kind: i, n: len(c.pods)})
	}
	return p, items
}

func TestPackWholeSpreadsTheMix(t *testing.T) {
	// 4 CPU-heavy (2 CPU, 1Gi) and 4 memory-heavy (500m, 4Gi) pods on two 8 CPU / 16Gi nodes: spread
	// evenly, each node takes two of each (5 CPU, 10Gi) instead of one node filling up with CPU.
	p, items := testRepacker(nil, pendingClass(4, 2000, 1), pendingClass(4, 500, 4))
	bins, rest := p.packWhole(items, Resources{CPU: 8000, Memory: 16 << 30, Pods: 100}, 2)
	require.Len(t, bins, 2)
	assert.Empty(t, rest)
	for _, b := range bins {
		assert.Equal(t, Resources{CPU: 5000, Memory: 10 << 30, Pods: 4}, b.used)
		assert.ElementsMatch(t, []kindCount{{0, 2}, {1, 2}}, b.content)
	}
}

func TestPackWholeReturnsWhatDoesNotFit(t *testing.T) {
	// Five 3 CPU pods on one 8 CPU node (1.9 nodes round down): two fit, three are left.
	p, items := testRepacker(nil, pendingClass(5, 3000, 1))
	bins, rest := p.packWhole(items, Resources{CPU: 8000, Memory: 16 << 30, Pods: 100}, 1.9)
	require.Len(t, bins, 1)
	assert.Equal(t, []kindCount{{0, 2}}, bins[0].content)
	assert.Equal(t, []kindCount{{0, 3}}, rest)
}

func TestSplitByShape(t *testing.T) {
	memHeavy := pendingClass(4, 500, 4)  // 8Gi per CPU
	balanced := pendingClass(4, 1000, 2) // 2Gi per CPU
	cpuHeavy := pendingClass(4, 2000, 2) // 1Gi per CPU
	p, items := testRepacker(nil, memHeavy, balanced, cpuHeavy)
	// A budget of 10 CPU and 12Gi on the CPU-optimised type takes the four CPU-heavy pods (8 CPU, 8Gi)
	// and then two balanced ones (2 CPU, 4Gi); the rest goes to the other type. Both keep item order.
	lo, hi := p.splitByShape(items, 10000, float64(12<<30), Resources{CPU: 4000, Memory: 8 << 30, Pods: 100})
	assert.Equal(t, []kindCount{{1, 2}, {2, 4}}, lo)
	assert.Equal(t, []kindCount{{0, 4}, {1, 2}}, hi)
	// Pods that do not fit the type stay out of its part, whatever the budget.
	lo, _ = p.splitByShape(items, 1e9, 1e18, Resources{CPU: 1500, Memory: 8 << 30, Pods: 100})
	assert.Equal(t, []kindCount{{0, 4}, {1, 4}}, lo)
}

func TestLPRepackMixesTypes(t *testing.T) {
	// CPU-heavy and memory-heavy pods with a CPU-optimised and a memory-optimised type at the same
	// price: either type alone strands a resource (c alone needs 6 nodes, r alone 9), the LP mix does
	// not (two of each).
	options := []repackOption{{cand: sizedCandidate("c", 16, 16, 0.50, "a"), price: 0.50}, {cand: sizedCandidate("r", 4, 32, 0.50, "a"), price: 0.50}}
	p, items := testRepacker(options, pendingClass(32, 1000, 1), pendingClass(16, 250, 4))
	bins, cost := p.lpRepack(items, 0)
	assert.InDelta(t, 2.0, cost, 1e-9)
	assert.Len(t, bins, 4)
}
