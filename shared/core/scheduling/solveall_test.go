package scheduling_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestSolveAllMatchesSolve: SolveAll's solves, run on several goroutines over one Prepared, each
// leaving out other nodes and placing other pods, give in the jobs' order the plans Solve gives
// each job alone.
func TestSolveAllMatchesSolve(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			in := withExistingNodes(scheduling.Input{NodePools: pools(NodePool("default")), InstanceTypes: RealisticInstanceTypes()}, seed)
			require.NotEmpty(t, in.Nodes)
			var jobs []scheduling.SolveJob
			for i := range 7 {
				leave := map[string]bool{}
				for j, n := range in.Nodes {
					if (i+j)%3 == 0 {
						leave[n.Node.Name] = true
					}
				}
				jobs = append(jobs, scheduling.SolveJob{Pods: in.Pods[:len(in.Pods)*(i+1)/7], LeaveOut: leave})
			}
			want := make([]string, len(jobs))
			for i, j := range jobs {
				plan, err := scheduling.Prepare(in).Solve(j.Pods, j.LeaveOut)
				require.NoError(t, err)
				want[i] = planJSON(t, plan)
			}
			prepared := scheduling.Prepare(in)
			for range 2 { // the second round finds the memos the first filled
				got := prepared.SolveAll(jobs)
				require.Len(t, got, len(jobs))
				for i, r := range got {
					require.NoError(t, r.Err, "job %d", i)
					assert.Equal(t, want[i], planJSON(t, r.Plan), "job %d", i)
				}
			}
		})
	}
}

// TestSolveAllRaisesASolvesPanicOnItsCaller: a solve that panics on one of SolveAll's goroutines
// does not end the process; SolveAll raises it on its caller's goroutine, with the solve's stack.
func TestSolveAllRaisesASolvesPanicOnItsCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	in := withExistingNodes(scheduling.Input{NodePools: pools(NodePool("default")), InstanceTypes: RealisticInstanceTypes()}, 1)
	prepared := scheduling.Prepare(in)
	broken := []*corev1.Pod{nil} // a nil pod: the solve dereferences it
	var raised any
	func() {
		defer func() { raised = recover() }()
		prepared.SolveAll([]scheduling.SolveJob{{Pods: in.Pods}, {Pods: broken}, {Pods: in.Pods}})
	}()
	require.IsType(t, scheduling.SolvePanic{}, raised)
	p := raised.(scheduling.SolvePanic)
	assert.NotEmpty(t, p.Stack)
	assert.Contains(t, fmt.Sprint(p.Value), "nil pointer")
}

func planJSON(t *testing.T, plan *scheduling.Plan) string {
	t.Helper()
	data, err := json.Marshal(plan)
	require.NoError(t, err)
	return string(data)
}
