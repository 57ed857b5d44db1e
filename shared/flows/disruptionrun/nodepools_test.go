package disruptionrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/disruption"
)

// decode reads, defaults and validates manifests, failing the test on any problem.
func decode(t testing.TB, yaml string) apis.Objects {
	t.Helper()
	objs, err := apis.Decode("test.yaml", []byte(yaml))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	return objs
}

const pools = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: defaulted}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: tuned}
spec:
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 90s
    budgets:
    - nodes: "3"
      reasons: [Empty, Drifted]
    - nodes: "0"
      schedule: "0 9 * * mon-fri"
      duration: 8h
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: never}
spec:
  disruption:
    consolidateAfter: Never
    budgets: []
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`

func TestNodePoolsFrom(t *testing.T) {
	got, err := NodePoolsFrom(decode(t, pools))
	require.NoError(t, err)
	require.Len(t, got, 3)
	byName := map[string]disruption.NodePool{}
	for _, p := range got {
		byName[p.Name()] = p
	}

	d := byName["defaulted"]
	assert.Equal(t, disruption.WhenEmptyOrUnderutilized, d.Policy)
	require.NotNil(t, d.ConsolidateAfter)
	assert.Zero(t, *d.ConsolidateAfter)
	assert.Equal(t, []disruption.Budget{{Nodes: "10%"}}, d.Budgets, "Karpenter's default budget")
	assert.NotEmpty(t, d.Scheduling.Requirements, "the scheduler's view comes along")

	tuned := byName["tuned"]
	assert.Equal(t, disruption.WhenEmpty, tuned.Policy)
	require.NotNil(t, tuned.ConsolidateAfter)
	assert.Equal(t, 90*time.Second, *tuned.ConsolidateAfter)
	assert.Equal(t, []disruption.Budget{
		{Nodes: "3", Reasons: []disruption.Reason{disruption.ReasonEmpty, disruption.ReasonDrifted}},
		{Nodes: "0", Schedule: "0 9 * * mon-fri", Duration: 8 * time.Hour},
	}, tuned.Budgets)

	never := byName["never"]
	assert.Nil(t, never.ConsolidateAfter, "Never disables consolidation")
	assert.NotNil(t, never.Budgets, "an explicit empty list stays empty: no limit")
	assert.Empty(t, never.Budgets)
}
