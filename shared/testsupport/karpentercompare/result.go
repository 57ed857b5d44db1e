package main

import (
	"slices"
	"time"
)

// result is one solver's outcome on one input.
type result struct {
	Claims        int
	Cost          float64 // $/hour of launching every new claim
	Setup, Solve  time.Duration
	Unschedulable int
	LowerBound    float64 // Nodewright's LP lower bound on Cost; 0 for Karpenter
}

// summary is the median of several runs of one solver on one input.
type summary struct {
	result
	// CostMin and CostMax span the runs' costs: a solver whose choices depend on map order may
	// differ from run to run.
	CostMin, CostMax float64
}

// summarize takes the run with the median Solve time (the lower middle for an even count) and the
// median setup time, and the range of the runs' costs.
func summarize(runs []result) summary {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b result) int { return int(a.Solve - b.Solve) })
	s := summary{result: sorted[(len(sorted)-1)/2], CostMin: runs[0].Cost, CostMax: runs[0].Cost}
	setups := make([]time.Duration, len(runs))
	for i, r := range runs {
		setups[i] = r.Setup
		s.CostMin = min(s.CostMin, r.Cost)
		s.CostMax = max(s.CostMax, r.Cost)
	}
	slices.Sort(setups)
	s.Setup = setups[(len(setups)-1)/2]
	return s
}
