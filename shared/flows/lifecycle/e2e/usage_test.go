package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/flows/lifecycle"
)

// During a migration Karpenter's NodePools may have the same names as Nodewright's: its Nodes then carry
// karpenter.sh/nodepool=default too. The NodePool usage (the nodepools_usage metrics) counts only the
// Nodes Nodewright's claims stand for; the old code counted Karpenter's as well.
func TestNodePoolUsageCountsOnlyItsOwnNodes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	own := e.launch(t, "default-use01", "default")
	e.launchedClaim(t, "default-use01", "default", own)
	e.joinNode(t, "ip-10-0-7-1.ec2.internal", own, "default")
	karpenters := e.launchKarpenters(t, "default-k7x2p", "default")
	e.joinNode(t, "ip-10-0-7-2.ec2.internal", karpenters, "default")

	rep, err := e.runner(nil).Run(ctx, "run-1")
	require.NoError(t, err)
	var def *lifecycle.PoolUsage
	for i := range rep.Usage {
		if rep.Usage[i].NodePool == "default" {
			def = &rep.Usage[i]
		}
	}
	require.NotNil(t, def, "default is listed: %v", rep.Usage)
	assert.Equal(t, 1, def.Nodes, "Karpenter's Node of the same NodePool name is not Nodewright's usage")
	cpu := def.Used[corev1.ResourceCPU]
	assert.Equal(t, "2", cpu.String(), "one Node of 2 CPUs")
}
