package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// teamsPool lets pods choose their team and annotates its nodes.
const teamsPool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: teams
spec:
  template:
    metadata:
      annotations:
        example.com/owner: platform
        example.com/runbook: https://runbooks.example.com/teams
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: team
          operator: Exists
`

// applyConfig validates NodePools and EC2NodeClasses and adds them to the stored configuration,
// keeping what is there.
func (e *env) applyConfig(t *testing.T, yaml string) {
	t.Helper()
	objs, err := apis.Decode("config.yaml", []byte(yaml))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(t, err)
	_, err = e.store.ApplyConfig(context.Background(), items, false)
	require.NoError(t, err)
}

// TestRegistrationAppliesTheClaimLabelsAndTemplateAnnotations: the Node of a claim the provisioner
// recorded with a narrowed label (team=a) and its instance type's labels gets every one of them, and
// the NodePool's template annotations.
func TestRegistrationAppliesTheClaimLabelsAndTemplateAnnotations(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.applyConfig(t, teamsPool)

	inst := e.launch(t, "teams-lab01", "teams")
	e.launchedClaim(t, "teams-lab01", "teams", inst)
	want := map[string]string{"team": "a", "karpenter.sh/nodepool": "teams", "karpenter.k8s.aws/ec2nodeclass": "default",
		"karpenter.k8s.aws/instance-category": "m", "karpenter.k8s.aws/instance-family": "m5",
		"karpenter.k8s.aws/instance-generation": "5", "karpenter.k8s.aws/instance-size": "large",
		"karpenter.k8s.aws/instance-cpu": "2", "karpenter.k8s.aws/instance-memory": "8192",
		"karpenter.k8s.aws/instance-hypervisor": "nitro", "node.kubernetes.io/instance-type": "m5.large",
		"topology.kubernetes.io/zone": zone, "karpenter.sh/capacity-type": "on-demand"}
	_, err := e.store.UpdateClaim(ctx, "teams-lab01", func(c *state.Claim) error {
		c.Labels = want
		return nil
	})
	require.NoError(t, err)
	e.joinNode(t, "ip-10-0-1-40.ec2.internal", inst, "teams")

	rep, err := e.runner(nil).Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Registered, rep.String())
	assert.Empty(t, rep.Errors)
	n := e.node(t, "ip-10-0-1-40.ec2.internal")
	for k, v := range want {
		assert.Equal(t, v, n.Labels[k], k)
	}
	assert.Equal(t, "platform", n.Annotations["example.com/owner"])
	assert.Equal(t, "https://runbooks.example.com/teams", n.Annotations["example.com/runbook"])
	assert.Equal(t, "ip-10-0-1-40.ec2.internal", e.claim(t, "teams-lab01").NodeName)
}
