package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompareSchedulesEveryPod runs both real schedulers on small inputs: every pod is placed and
// both plans cost at least Nodewright's lower bound.
func TestCompareSchedulesEveryPod(t *testing.T) {
	for _, in := range []benchInput{karpenterMixInput(50), realisticInput(1), zoneSpreadInput(1)} {
		t.Run(in.Name, func(t *testing.T) {
			r, err := compare(in, 1, io.Discard)
			require.NoError(t, err)
			assert.Positive(t, r.Karpenter.Claims)
			assert.Positive(t, r.Ours.Claims)
			assert.Positive(t, r.Ours.LowerBound)
			assert.GreaterOrEqual(t, r.Karpenter.Cost, r.Ours.LowerBound-1e-9)
			assert.GreaterOrEqual(t, r.Ours.Cost, r.Ours.LowerBound-1e-9)
		})
	}
}

func TestRunPrintsTable(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, io.Discard, "20", "", 1))
	assert.Contains(t, out.String(), "| karpenter-mix | 20 |")
}

func TestRunRejectsBadFlags(t *testing.T) {
	assert.ErrorContains(t, run(io.Discard, io.Discard, "x", "", 1), `-pods: "x" is not an integer`)
	assert.ErrorContains(t, run(io.Discard, io.Discard, "", "0", 1), "-scales: 0 is not a positive scale")
	assert.ErrorContains(t, run(io.Discard, io.Discard, "10", "", 0), "-runs: 0")
}

func TestSummarizeTakesMedianAndCostRange(t *testing.T) {
	s := summarize([]result{{Solve: 3, Setup: 1, Cost: 2}, {Solve: 1, Setup: 3, Cost: 1}, {Solve: 2, Setup: 2, Cost: 3}})
	assert.EqualValues(t, 2, s.Solve)
	assert.EqualValues(t, 2, s.Setup)
	assert.Equal(t, 1.0, s.CostMin)
	assert.Equal(t, 3.0, s.CostMax)
}
