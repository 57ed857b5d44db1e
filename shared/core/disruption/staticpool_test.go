package disruption_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
)

// TestStaticPoolNodesAreNeverConsolidated: an empty node of a static NodePool (spec.replicas) is never
// consolidated, while an empty node of a dynamic pool beside it is: static pools are left out of the
// pools the engine disrupts (disruptionrun.NodePoolsFrom), as Karpenter ignores consolidationPolicy and
// consolidateAfter for them.
func TestStaticPoolNodesAreNeverConsolidated(t *testing.T) {
	objs, err := apis.Decode("pools.yaml", []byte(`
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  disruption: {consolidateAfter: 0s}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: 1
  disruption: {consolidateAfter: 0s, consolidationPolicy: WhenEmpty}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	pools, err := disruptionrun.NodePoolsFrom(objs)
	require.NoError(t, err)
	small, od := schedulingtest.SmallCatalog(), scheduling.CapacityTypeOnDemand

	res := disruption.Decide(disruption.Input{Now: now, NodePools: pools, InstanceTypes: small, Nodes: []disruption.Node{
		node(small, nodeSpec{"dynamic-empty", "default", "medium", od, nil}),
		node(small, nodeSpec{"static-empty", "fixed", "medium", od, nil}),
	}})
	require.Len(t, res.Commands, 1, "kept: %v", res.Kept)
	assert.Equal(t, disruption.MethodEmpty, res.Commands[0].Method)
	assert.Equal(t, []string{"dynamic-empty"}, nodeNames(res.Commands[0]))
	kept := map[string]string{}
	for _, k := range res.Kept {
		kept[k.Node] = k.Reason
	}
	assert.Contains(t, kept, "static-empty")
}
