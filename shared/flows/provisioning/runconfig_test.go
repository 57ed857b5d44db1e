package provisioning

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// fakeConfig is a stored configuration.
type fakeConfig struct {
	items []state.ConfigItem
	err   error
}

func (f fakeConfig) ListConfig(context.Context, string) ([]state.ConfigItem, error) {
	return f.items, f.err
}

// storedConfig is what `nodewright apply` would store for yaml.
func storedConfig(t *testing.T, yaml string) []state.ConfigItem {
	t.Helper()
	items, err := state.ConfigItemsFrom(decode(t, yaml))
	require.NoError(t, err)
	return items
}

const poolAndClass = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
` + nodeClassRef + `---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{tags: {team: platform}}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

func TestReadConfig(t *testing.T) {
	items := storedConfig(t, poolAndClass)
	items = append(items,
		state.ConfigItem{Kind: state.KindNodePool, Name: "broken", Spec: "{not json"},
		state.ConfigItem{Kind: state.KindNodePool, Name: "bad-req",
			Spec: `{"metadata":{"name":"bad-req"},"spec":{"template":{"spec":{"requirements":[{"key":"k","operator":"Gt","values":["x"]}]}}}}`},
		state.ConfigItem{Kind: "Widget", Name: "w"})
	cfg, problems, err := readConfig(context.Background(), fakeConfig{items: items})
	require.NoError(t, err)
	require.Len(t, cfg.pools, 1)
	assert.Equal(t, "default", cfg.pools[0].Name)
	assert.Equal(t, "default", NodeClassRefName(cfg.pools[0]))
	assert.NotEmpty(t, cfg.poolHash["default"])
	assert.NotEmpty(t, cfg.classHash["default"])
	require.Contains(t, cfg.nodeClasses, "default")
	assert.Contains(t, cfg.nodePools, "default")
	assert.Contains(t, cfg.nodePools, "bad-req", "decoded NodePools are kept for drift, those the scheduler cannot use too")
	assert.Len(t, problems, 3)
	assert.Contains(t, problems[0], "NodePool broken: decoding stored spec")
	assert.Contains(t, problems[1], "Widget/w: unknown kind")
	assert.Contains(t, problems[2], "NodePool bad-req")

	_, _, err = readConfig(context.Background(), fakeConfig{err: errors.New("throttled")})
	assert.ErrorContains(t, err, "reading configuration: throttled")
}
