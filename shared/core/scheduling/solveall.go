package scheduling

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// SolveJob is one solve of SolveAll: the pods to place and the nodes to leave out, as Solve takes
// them, and the settling nodes.
type SolveJob struct {
	Pods     []*corev1.Pod
	LeaveOut map[string]bool
	// Settling are existing nodes that take none of Pods but those in Exempt: Karpenter's
	// consolidation keeps the pods of the nodes it removes off nodes still inside their own
	// NodePool's consolidateAfter, while pending pods and pods of nodes going away may land there.
	// Nil: every node takes every pod.
	Settling map[string]bool
	Exempt   map[*corev1.Pod]bool
}

// SolveResult is what Solve returned for one SolveJob.
type SolveResult struct {
	Plan *Plan
	Err  error
}

// SolvePanic is the panic SolveAll raises on its caller's goroutine when one of its solves panicked:
// the solve's panic value and the stack of the goroutine it panicked on.
type SolvePanic struct {
	Value any
	Stack []byte
}

func (p SolvePanic) String() string { return fmt.Sprintf("%v\n\n%s", p.Value, p.Stack) }

// SolveAll runs the jobs' solves, up to GOMAXPROCS at a time, and returns their results in the
// jobs' order. Each result is the one Solve gives for its job alone: solves share nothing but the
// Prepared's memos, which answer the same whoever fills them (TestSolveAllMatchesSolve). A solve
// that panics does not take the process down from its goroutine: once every solve is done, the
// panic is raised again on the caller's goroutine, where the caller's recovery sees it.
func (p *Prepared) SolveAll(jobs []SolveJob) []SolveResult {
	out := make([]SolveResult, len(jobs))
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	if workers <= 1 {
		for i, j := range jobs {
			out[i].Plan, out[i].Err = p.solveJob(j)
		}
		return out
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		next   int
		failed *SolvePanic
	)
	take := func() int {
		mu.Lock()
		defer mu.Unlock()
		if next == len(jobs) || failed != nil {
			return -1
		}
		next++
		return next - 1
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					if failed == nil {
						failed = &SolvePanic{Value: r, Stack: debug.Stack()}
					}
					mu.Unlock()
				}
			}()
			for i := take(); i >= 0; i = take() {
				out[i].Plan, out[i].Err = p.solveJob(jobs[i])
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		panic(*failed)
	}
	return out
}
