package sizing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheSmallestTierThatHoldsTheClusterIsChosen(t *testing.T) {
	small, err := For(DefaultClusterPods)
	require.NoError(t, err)
	assert.Equal(t, 1024, small[Provisioner].MemoryMB, "the default tier keeps what the functions had")
	mid, err := For(DefaultClusterPods + 1)
	require.NoError(t, err)
	assert.Greater(t, mid[Provisioner].MemoryMB, small[Provisioner].MemoryMB)
	top, err := For(MaxClusterPods)
	require.NoError(t, err)
	for _, fn := range Functions {
		assert.LessOrEqual(t, top[fn].MemoryMB, 4096, fn)
		assert.GreaterOrEqual(t, top[fn].MemoryMB, mid[fn].MemoryMB, fn)
		assert.Positive(t, top[fn].Timeout, fn)
	}
}

func TestAClusterOutsideTheTiersIsRefusedByName(t *testing.T) {
	for _, pods := range []int{0, -1, MaxClusterPods + 1} {
		_, err := For(pods)
		assert.ErrorContains(t, err, "clusterPods", pods)
	}
}

func TestGoMemLimitIsNinetyPercent(t *testing.T) {
	assert.Equal(t, "921MiB", Size{MemoryMB: 1024}.GoMemLimit())
}
