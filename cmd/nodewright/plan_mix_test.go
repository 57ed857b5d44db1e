package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// TestPlanMixMatchesInProcessSolve checks that `nodewright plan` on Karpenter's benchmark mix, read from
// the files a user would write, plans exactly what scheduling.Solve plans for the same pods, catalog and
// NodePool built in memory (as BenchmarkSolveKarpenterMix*Pods does): the CLI's solveSeconds and the
// benchmark's time measure the same work on the same input.
func TestPlanMixMatchesInProcessSolve(t *testing.T) {
	const pods = 1000
	doc, _ := runMixPlan(t, writeMixInputs(t, pods))
	assert.Positive(t, doc.ReadSeconds, "the time spent reading the input is reported beside the solve's")
	assert.Positive(t, doc.SolveSeconds)

	pool := schedulingtest.NodePool("default",
		schedulingtest.Requirement(scheduling.LabelOS, scheduling.OpIn, "linux"),
		schedulingtest.Labels(map[string]string{scheduling.LabelEC2NodeClass: "default"}))
	plan, err := scheduling.Solve(scheduling.Input{
		Pods:          schedulingtest.KarpenterMix(pods, mixSeed),
		NodePools:     []scheduling.NodePool{pool},
		InstanceTypes: schedulingtest.InstanceTypes(400),
	})
	require.NoError(t, err)
	require.Empty(t, plan.Unschedulable)
	require.Len(t, doc.NodeClaims, len(plan.NewClaims))
	for i, c := range plan.NewClaims {
		want, err := json.Marshal(c)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(doc.NodeClaims[i]), "claim %d", i)
	}
}
