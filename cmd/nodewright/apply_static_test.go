package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// staticPoolYAML is a static NodePool of replicas nodes (and the sample EC2NodeClass it uses).
func staticPoolYAML(replicas string) string {
	return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  replicas: ` + replicas + `
  limits: {nodes: 5}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`
}

// TestApplyStaticNodePoolFollowsTheDeployedGate: with the deployment's StaticCapacity gate off (no
// settings stored: Karpenter's defaults) a static NodePool is refused at spec.replicas; with the gate on
// in the stored settings it is applied, its replicas change with the next apply, and turning it dynamic
// is refused with nothing written.
func TestApplyStaticNodePoolFollowsTheDeployedGate(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "nodewright-state")
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"apply"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	three, one := write("three.yaml", staticPoolYAML("3")), write("one.yaml", staticPoolYAML("1"))

	code, _, stderr := run("-f", three, "--table", "nodewright-state")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "NodePool/default: spec.replicas: Forbidden: static NodePools need the feature gate StaticCapacity")
	assert.Contains(t, stderr, "nothing applied")
	_, err := store.GetConfig(ctx, state.KindNodePool, "default")
	require.True(t, state.IsNotFound(err), "nothing was written")

	s := settings.Default()
	s.FeatureGates.StaticCapacity = true
	item, err := state.SettingsItem(s)
	require.NoError(t, err)
	_, err = store.PutConfig(ctx, item)
	require.NoError(t, err)

	code, out, stderr := run("-f", three, "--table", "nodewright-state")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "nodepool/default created")
	code, out, stderr = run("-f", one, "--table", "nodewright-state")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "nodepool/default updated")
	stored, err := store.GetConfig(ctx, state.KindNodePool, "default")
	require.NoError(t, err)
	assert.Contains(t, stored.Spec, `"replicas":1`)

	code, _, stderr = run("-f", filepath.Join("..", "..", "infra", "manifests"), "--table", "nodewright-state")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "NodePool/default: spec.replicas: Forbidden: Cannot transition NodePool between static")
	again, err := store.GetConfig(ctx, state.KindNodePool, "default")
	require.NoError(t, err)
	assert.Equal(t, stored.Version, again.Version, "nothing was written")
}

// TestValidateStaticNodePoolNeedsFeatureGates: `nodewright validate` refuses a static NodePool at
// spec.replicas unless --feature-gates turns StaticCapacity on, as `cdk synth` does with the context.
func TestValidateStaticNodePoolNeedsFeatureGates(t *testing.T) {
	file := filepath.Join(t.TempDir(), "static.yaml")
	require.NoError(t, os.WriteFile(file, []byte(staticPoolYAML("2")), 0o600))
	var out, errOut bytes.Buffer
	code := dispatch([]string{"validate", "-f", file}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut.String(), "NodePool/default: spec.replicas: Forbidden: static NodePools need the feature gate StaticCapacity")

	out.Reset()
	errOut.Reset()
	code = dispatch([]string{"validate", "-f", file, "--feature-gates", "StaticCapacity=true"}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Equal(t, "1 NodePool, 1 EC2NodeClass valid\n", out.String())
}
