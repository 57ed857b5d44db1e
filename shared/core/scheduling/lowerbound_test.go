package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLowerBound(t *testing.T) {
	c := Capacity{CPU: 4, Memory: 8, Price: 1}    // 4 CPU/$, 8 GiB/$
	m := Capacity{CPU: 4, Memory: 16, Price: 1.2} // 3.33 CPU/$, 13.3 GiB/$
	pricey := Capacity{CPU: 4, Memory: 8, Price: 5}
	tests := []struct {
		name        string
		cpu, memory float64
		types       []Capacity
		want        float64
	}{
		{name: "nothing to place", types: []Capacity{c}, want: 0},
		{name: "cpu-bound on one type", cpu: 40, memory: 10, types: []Capacity{c}, want: 10},
		{name: "memory-bound on one type", cpu: 4, memory: 80, types: []Capacity{c}, want: 10},
		{name: "dominated type ignored", cpu: 40, memory: 10, types: []Capacity{pricey, c}, want: 10},
		// 40 CPU and 120 GiB: x c + y m with 4x+4y=40, 8x+16y=120 → x=5, y=5 → 5 + 6 = 11, cheaper
		// than all-m (7.5 m for memory... 10 m for cpu = 12) or all-c (15 for memory).
		{name: "a two-type mix beats either alone", cpu: 40, memory: 120, types: []Capacity{c, m}, want: 11},
		{name: "no usable type", cpu: 1, memory: 1, types: []Capacity{{CPU: 0, Memory: 1, Price: 1}}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, LowerBound(tt.cpu, tt.memory, tt.types), 1e-9)
		})
	}
}

func TestParetoFront(t *testing.T) {
	types := []Capacity{{CPU: 4, Memory: 8, Price: 1}, {CPU: 4, Memory: 8, Price: 1}, {CPU: 2, Memory: 4, Price: 1}, {CPU: 2, Memory: 16, Price: 1}}
	assert.Equal(t, []int{0, 3}, paretoFront(types), "duplicates keep the first; dominated types drop")
}
