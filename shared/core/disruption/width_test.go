package disruption_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// TestWiderMatchesOneAtATime: the engine solving two or three simulations at a time (single-node's
// candidates a batch at a time; multi-node's searches together, with simulations on a guess of
// where a search goes next) decides what it decides solving one at a time: the same commands, the
// same nodes kept with the same reasons, the same simulations counted. It holds over whole
// Sequences, both rule sets, and in Decides whose simulation budget runs out partway through a
// batch or a search.
func TestWiderMatchesOneAtATime(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	methods := map[disruption.Method]int{}
	for _, tc := range []struct {
		seed       uint64
		removed    float64
		spread     bool
		spotToSpot bool
	}{{3, 0.5, false, false}, {8, 0.6, false, false}, {3, 0.5, true, false}, {8, 0.4, true, false}, {5, 0.6, false, true}, {5, 0.6, true, true}} {
		in := fragmented(150, 20, tc.removed, tc.seed)
		in.Options.SpotToSpotConsolidation = tc.spotToSpot
		if tc.spread {
			spreadSomeApps(in)
		}
		name := fmt.Sprintf("seed=%d/removed=%v/spread=%v/spot-to-spot=%v", tc.seed, tc.removed, tc.spread, tc.spotToSpot)
		t.Run(name, func(t *testing.T) {
			one := disruption.Sequence(disruption.WithWidth(in, 1), disruption.SequenceOptions{})
			require.NotEmpty(t, one.Commands)
			for _, width := range []int{2, 3} {
				got := disruption.Sequence(disruption.WithWidth(in, width), disruption.SequenceOptions{})
				assert.Equal(t, one.Commands, got.Commands, "width %d", width)
				assert.Equal(t, one.Kept, got.Kept, "width %d", width)
				assert.Equal(t, one.Nodes, got.Nodes, "width %d", width)
				assert.Equal(t, one.Ticks, got.Ticks, "width %d", width)
				assert.Equal(t, one.Simulations, got.Simulations, "width %d", width)
			}
			for _, c := range one.Commands {
				methods[c.Method]++
			}
		})
		// With the pool's budget of 10%, multi-node spends the simulations; with a budget of one
		// node it has nothing to search, and single-node spends them.
		for _, budget := range []string{"10%", "1"} {
			t.Run(name+"/budget="+budget, func(t *testing.T) {
				in := in
				in.NodePools = []disruption.NodePool{pool("default", amd64Only, budgets(disruption.Budget{Nodes: budget}))}
				for most := 1; most <= 30; most++ {
					budgeted := in
					budgeted.Options.MaxSimulations = most
					one := disruption.Decide(disruption.WithWidth(budgeted, 1))
					for _, width := range []int{2, 3} {
						got := disruption.Decide(disruption.WithWidth(budgeted, width))
						assert.Equal(t, one.Commands, got.Commands, "budget %d, width %d", most, width)
						assert.Equal(t, one.Kept, got.Kept, "budget %d, width %d", most, width)
						assert.Equal(t, one.Simulations, got.Simulations, "budget %d, width %d", most, width)
						assert.Equal(t, one.SearchStopped, got.SearchStopped, "budget %d, width %d", most, width)
					}
					if len(one.Commands) > 0 {
						methods[one.Commands[0].Method+"/budgeted"]++
					}
				}
			})
		}
	}
	for _, m := range []disruption.Method{disruption.MethodMulti, disruption.MethodSingle, disruption.MethodMulti + "/budgeted", disruption.MethodSingle + "/budgeted"} {
		assert.Positive(t, methods[m], "some commands come from %s", m)
	}
}
