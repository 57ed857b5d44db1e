package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSortedSetOperations(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, sortedUnique([]string{"b", "a", "b"}))
	assert.Nil(t, sortedUnique(nil))
	assert.Equal(t, []string{"b"}, intersectSorted([]string{"a", "b"}, []string{"b", "c"}))
	assert.Equal(t, []string{"a", "b", "c"}, unionSorted([]string{"a", "b"}, []string{"b", "c"}))
	assert.Equal(t, []string{"a"}, differenceSorted([]string{"a", "b"}, []string{"b", "c"}))
	assert.Equal(t, []string{"x", "y"}, sortedKeys(map[string]int{"y": 1, "x": 2}))
}
