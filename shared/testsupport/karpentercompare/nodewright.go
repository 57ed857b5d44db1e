package main

import (
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// runNodewright solves the input with Nodewright's scheduler and one NodePool named pool without
// requirements, as the benchmarks do. Solve has no separate setup, so all of it is Solve time.
func runNodewright(in benchInput, pool string) (result, error) {
	input := scheduling.Input{
		Pods:          copyPods(in.Pods),
		NodePools:     []scheduling.NodePool{{Name: pool}},
		InstanceTypes: in.Types,
	}
	start := time.Now()
	plan, err := scheduling.Solve(input)
	solve := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("nodewright solve: %w", err)
	}
	return result{
		Claims: len(plan.NewClaims), Cost: plan.TotalPrice, Solve: solve,
		Unschedulable: len(plan.Unschedulable), LowerBound: plan.LowerBound,
	}, nil
}
