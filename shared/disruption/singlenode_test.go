package disruption_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/disruption"
)

// TestSingleNodeInBatchesMatchesOneByOne: single-node simulating its candidates two or three at a
// time, solved together, decides what it decides trying them one by one: the same commands, the
// same nodes kept with the same reasons, the same simulations counted, over whole Sequences and in
// Decides whose simulation budget runs out partway through a batch.
func TestSingleNodeInBatchesMatchesOneByOne(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	singles, budgetedSingles := 0, 0
	for _, tc := range []struct {
		seed    uint64
		removed float64
		spread  bool
	}{{3, 0.5, false}, {8, 0.6, false}, {3, 0.5, true}, {8, 0.4, true}} {
		in := fragmented(150, 20, tc.removed, tc.seed)
		if tc.spread {
			spreadSomeApps(in)
		}
		t.Run(fmt.Sprintf("seed=%d/removed=%v/spread=%v", tc.seed, tc.removed, tc.spread), func(t *testing.T) {
			one := disruption.Sequence(disruption.WithSingleBatch(in, 1), disruption.SequenceOptions{})
			require.NotEmpty(t, one.Commands)
			for _, width := range []int{2, 3} {
				got := disruption.Sequence(disruption.WithSingleBatch(in, width), disruption.SequenceOptions{})
				assert.Equal(t, one.Commands, got.Commands, "width %d", width)
				assert.Equal(t, one.Kept, got.Kept, "width %d", width)
				assert.Equal(t, one.Nodes, got.Nodes, "width %d", width)
				assert.Equal(t, one.Ticks, got.Ticks, "width %d", width)
				assert.Equal(t, one.Simulations, got.Simulations, "width %d", width)
			}
			for _, c := range one.Commands {
				if c.Method == disruption.MethodSingle {
					singles++
				}
			}
		})
		t.Run(fmt.Sprintf("seed=%d/removed=%v/spread=%v/budget", tc.seed, tc.removed, tc.spread), func(t *testing.T) {
			// A budget of one node leaves multi-node nothing to search: single-node spends the
			// simulations.
			in := in
			in.NodePools = []disruption.NodePool{pool("default", amd64Only, budgets(disruption.Budget{Nodes: "1"}))}
			for most := 1; most <= 30; most++ {
				budgeted := in
				budgeted.Options.MaxSimulations = most
				one := disruption.Decide(disruption.WithSingleBatch(budgeted, 1))
				for _, width := range []int{2, 3} {
					got := disruption.Decide(disruption.WithSingleBatch(budgeted, width))
					assert.Equal(t, one.Commands, got.Commands, "budget %d, width %d", most, width)
					assert.Equal(t, one.Kept, got.Kept, "budget %d, width %d", most, width)
					assert.Equal(t, one.Simulations, got.Simulations, "budget %d, width %d", most, width)
					assert.Equal(t, one.SearchStopped, got.SearchStopped, "budget %d, width %d", most, width)
				}
				if len(one.Commands) > 0 && one.Commands[0].Method == disruption.MethodSingle {
					budgetedSingles++
				}
			}
		})
	}
	assert.Positive(t, singles, "some commands come from single-node")
	assert.Positive(t, budgetedSingles, "some budgeted Decides end in a single-node command")
}
