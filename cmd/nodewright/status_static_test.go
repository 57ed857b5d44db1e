package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// TestStatusShowsStaticPoolsReplicasAndCurrentNodes: `nodewright status` lists each static NodePool
// with its replicas desired, the nodes it currently keeps and those deleting (a draining claim is not
// current, a deleted one not counted at all), in the table and in -o json; a dynamic pool is not listed.
func TestStatusShowsStaticPoolsReplicasAndCurrentNodes(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "status-static")
	objs, err := apis.Decode("static.yaml", []byte(staticPoolYAML("3")+"---\n"+`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: dynamic}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	for _, np := range objs.NodePools {
		spec, err := json.Marshal(np)
		require.NoError(t, err)
		_, err = store.PutConfig(ctx, state.ConfigItem{Kind: state.KindNodePool, Name: np.Name, Spec: string(spec), StaticPool: np.IsStatic()})
		require.NoError(t, err)
	}
	created := time.Now().Add(-time.Hour)
	// Each claim goes through the lifecycle moves the state table allows, to where the test wants it.
	for name, steps := range map[string][]state.Lifecycle{"default-a": {state.Launched, state.Registered, state.Initialized},
		"default-b": {state.Launched}, "default-c": {state.Launched, state.Draining}, "default-d": {state.Deleted},
		"dynamic-e": {state.Launched}} {
		pool := strings.Split(name, "-")[0]
		_, err := store.CreateClaim(ctx, state.Claim{Name: name, NodePool: pool, CreatedAt: created})
		require.NoError(t, err)
		for _, l := range steps {
			_, err = store.UpdateClaim(ctx, name, func(c *state.Claim) error { c.Lifecycle = l; return nil })
			require.NoError(t, err)
		}
	}
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"status", "--table", "status-static"}, args...), strings.NewReader(""), &out, &errOut)
		require.Equal(t, 0, code, errOut.String())
		return out.String()
	}
	out := run()
	assert.Regexp(t, `STATIC NODEPOOL\s+REPLICAS\s+CURRENT\s+DELETING\ndefault\s+3\s+2\s+1\n`, out)
	assert.NotRegexp(t, `(?m)^dynamic\s+\d+\s+\d+\s+\d+$`, out)

	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(run("--all", "-o", "json")), &rep))
	assert.Equal(t, []staticPoolStatus{{Name: "default", StaticStatus: provisioning.StaticStatus{Replicas: 3, Nodes: 2, Deleting: 1}}}, rep.StaticPools)
}
