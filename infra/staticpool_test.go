package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

const staticPoolManifest = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: fixed}
spec:
  replicas: 2
  limits: {nodes: 3}
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
`

// staticManifests is the sample manifests plus a static NodePool, in a folder.
func staticManifests(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sample, err := os.ReadFile(filepath.Join("manifests", "default.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "default.yaml"), sample, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fixed.yaml"), []byte(staticPoolManifest), 0o600))
	return dir
}

// TestSynthStaticNodePoolFollowsFeatureGates: a static NodePool fails the synth at spec.replicas unless
// the featureGates context value turns StaticCapacity on; then its item is marked static.
func TestSynthStaticNodePoolFollowsFeatureGates(t *testing.T) {
	dir := staticManifests(t)
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit", "manifests": dir}})
	_, err := stackPropsFromContext(app)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NodePool/fixed: spec.replicas: Forbidden: static NodePools need the feature gate StaticCapacity")

	app = awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit", "manifests": dir,
		"featureGates": "StaticCapacity=true"}})
	props, err := stackPropsFromContext(app)
	require.NoError(t, err)
	static := map[string]bool{}
	for _, it := range props.Config {
		if it.Kind == state.KindNodePool {
			static[it.Name] = it.StaticPool
		}
	}
	assert.Equal(t, map[string]bool{"default": false, "fixed": true}, static)
}

// TestConfigDeploymentWritesNodePoolsOnCondition: each NodePool's write records whether it is static
// and is conditional on the stored pool being the same kind (state.StaticPoolWriteCondition); other
// items are written unconditionally.
func TestConfigDeploymentWritesNodePoolsOnCondition(t *testing.T) {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("ConfigOnly"), nil)
	table := NewStateTable(stack, "State")
	items := []state.ConfigItem{
		{Kind: state.KindEC2NodeClass, Name: "default", Spec: "{}"},
		{Kind: state.KindNodePool, Name: "default", Spec: "{}"},
		{Kind: state.KindNodePool, Name: "fixed", Spec: "{}", StaticPool: true},
	}
	NewConfigDeployment(stack, "Config", table.Table, items)
	template := assertions.Template_FromStack(stack, nil)
	writes := map[string]string{}
	for _, res := range *template.FindResources(jsii.String("Custom::AWS"), nil) {
		create := (*res)["Properties"].(map[string]interface{})["Create"]
		text := jsonString(t, create)
		for _, name := range []string{"EC2NodeClass-default", "NodePool-default", "NodePool-fixed"} {
			if strings.Contains(text, `/`+name) {
				writes[name] = text
			}
		}
	}
	require.Len(t, writes, 3)
	assert.NotContains(t, writes["EC2NodeClass-default"], "ConditionExpression")
	assert.Contains(t, writes["NodePool-default"], state.StaticPoolWriteCondition(false))
	assert.Contains(t, writes["NodePool-default"], `\"BOOL\":false`)
	assert.Contains(t, writes["NodePool-fixed"], state.StaticPoolWriteCondition(true))
	assert.Contains(t, writes["NodePool-fixed"], `\"BOOL\":true`)
}

// TestSynthCarriesALoweredReplicasToTheStoredPool: lowering a static NodePool's replicas in the manifests
// the CDK context names changes its item's spec and spec hash (so CloudFormation updates its write), and
// the write the deployment runs on update stores the new replicas, still marked static: a deploy is how
// replicas changes reach the functions, as `nodewright apply` is.
func TestSynthCarriesALoweredReplicasToTheStoredPool(t *testing.T) {
	fixed := func(replicas string) state.ConfigItem {
		dir := staticManifests(t)
		manifest := strings.Replace(staticPoolManifest, "replicas: 2", "replicas: "+replicas, 1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "fixed.yaml"), []byte(manifest), 0o600))
		app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit", "manifests": dir,
			"featureGates": "StaticCapacity=true"}})
		props, err := stackPropsFromContext(app)
		require.NoError(t, err)
		for _, it := range props.Config {
			if it.Kind == state.KindNodePool && it.Name == "fixed" {
				return it
			}
		}
		t.Fatal("no item for NodePool fixed")
		return state.ConfigItem{}
	}
	two, one := fixed("2"), fixed("1")
	assert.Contains(t, two.Spec, `"replicas":2`)
	assert.Contains(t, one.Spec, `"replicas":1`)
	assert.NotEqual(t, two.SpecHash, one.SpecHash, "a new spec hash: CloudFormation updates the write")
	assert.True(t, one.StaticPool)

	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("ConfigOnly"), nil)
	NewConfigDeployment(stack, "Config", NewStateTable(stack, "State").Table, []state.ConfigItem{one})
	template := assertions.Template_FromStack(stack, nil)
	found := false
	for _, res := range *template.FindResources(jsii.String("Custom::AWS"), nil) {
		update := jsonString(t, (*res)["Properties"].(map[string]interface{})["Update"])
		if strings.Contains(update, "/NodePool-fixed") {
			found = true
			assert.Contains(t, update, `\\\"replicas\\\":1`)
			assert.Contains(t, update, state.StaticPoolWriteCondition(true))
		}
	}
	assert.True(t, found, "the NodePool's write is in the template")
}
