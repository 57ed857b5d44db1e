package scheduling

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSpreadRoomIsTheDomainsShare(t *testing.T) {
	topo := newTopology(nil)
	topo.domains[LabelZone] = []string{"a", "b", "c"}
	// 4 pods placed (a: 3, b: 1) and 5 pending: the balanced final distribution is 3 per zone.
	g := &topoGroup{kind: kindSpread, key: LabelZone, maxSkew: 1, counts: map[string]int{"a": 3, "b": 1}, pending: 5}
	ct := &classTopology{owned: []*topoGroup{g}, matching: []*topoGroup{g}}
	assert.Equal(t, 0, topo.domainRoom(ct, LabelZone, "a"))
	assert.Equal(t, 2, topo.domainRoom(ct, LabelZone, "b"))
	assert.Equal(t, 3, topo.domainRoom(ct, LabelZone, "c"))
	assert.False(t, topo.spreadAllows(g, ct, "a"))
	assert.True(t, topo.spreadAllows(g, ct, "c"))
	// A class with no rule on the key is not limited.
	assert.Equal(t, math.MaxInt, topo.domainRoom(&classTopology{}, LabelZone, "a"))
}
