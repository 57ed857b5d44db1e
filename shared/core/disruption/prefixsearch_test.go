package disruption_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// TestSearchesTogetherMatchSearchesInTurn: with spot-to-spot on, multi-node's two searches (in
// consolidation order and in repack order) run together, their simulations solved at once on two
// goroutines; a Sequence then decides, tick by tick, what it decides with the searches run one
// after the other, with the same simulations, with spreads and without.
func TestSearchesTogetherMatchSearchesInTurn(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	multi := 0
	for _, tc := range []struct {
		seed    uint64
		removed float64
		spread  bool
	}{{5, 0.6, false}, {3, 0.5, false}, {5, 0.6, true}, {8, 0.4, true}} {
		t.Run(fmt.Sprintf("seed=%d/removed=%v/spread=%v", tc.seed, tc.removed, tc.spread), func(t *testing.T) {
			in := fragmented(150, 20, tc.removed, tc.seed)
			in.Options.SpotToSpotConsolidation = true
			if tc.spread {
				spreadSomeApps(in)
			}
			together := disruption.Sequence(in, disruption.SequenceOptions{})
			inTurn := disruption.Sequence(disruption.WithSearchesInTurn(in), disruption.SequenceOptions{})
			require.NotEmpty(t, inTurn.Commands)
			assert.Equal(t, inTurn.Commands, together.Commands)
			assert.Equal(t, inTurn.Kept, together.Kept)
			assert.Equal(t, inTurn.Nodes, together.Nodes)
			assert.Equal(t, inTurn.Ticks, together.Ticks)
			assert.Equal(t, inTurn.Simulations, together.Simulations)
			for _, c := range together.Commands {
				if c.Method == disruption.MethodMulti {
					multi++
				}
			}
		})
	}
	assert.Positive(t, multi, "some commands come from the multi-node searches")
}
