package mirror

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// healthScript is the Argo CD health check of the mirrors, as the README embeds it.
func healthScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("argocd-health.lua")
	require.NoError(t, err)
	return string(b)
}

// health runs the script as Argo CD does (gopher-lua, the object as the global obj, the returned table
// read for status and message).
func health(t *testing.T, script string, obj map[string]any) (status, message string) {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	require.NoError(t, L.DoString(script))
	hs, ok := L.Get(-1).(*lua.LTable)
	require.True(t, ok, "the script returns a table, got %s", L.Get(-1).Type())
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

// toLua converts a JSON-shaped value into Lua values, as Argo CD hands an object to its scripts.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(x)
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	}
	return lua.LNil
}

// object is a mirror as the API server serves it: the builder's output through JSON.
func object(t *testing.T, kind string, o Object) map[string]any {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": APIVersion, "kind": kind,
		"metadata": map[string]any{"name": o.Name, "labels": o.Labels}, "spec": o.Spec, "status": o.Status})
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// withConditions is a mirror of kind whose status holds conditions (type, status, reason, message).
func withConditions(kind string, conds ...[4]string) map[string]any {
	list := make([]any, 0, len(conds))
	for _, c := range conds {
		list = append(list, map[string]any{"type": c[0], "status": c[1], "reason": c[2], "message": c[3]})
	}
	return map[string]any{"apiVersion": APIVersion, "kind": kind, "metadata": map[string]any{"name": "x"},
		"status": map[string]any{"conditions": list}}
}

func TestArgoCDHealthOfTheMirrors(t *testing.T) {
	script := healthScript(t)
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	launched := state.Claim{Name: "default-abcde", NodePool: "default", NodeClass: "default", Lifecycle: state.Launched,
		InstanceID: "i-0123", ProviderID: "aws:///us-east-1a/i-0123", InstanceType: "m5.large", Zone: "us-east-1a",
		CapacityType: "spot", CreatedAt: at, LaunchedAt: &at}
	initialized := launched
	initialized.Lifecycle, initialized.NodeName, initialized.RegisteredAt, initialized.InitializedAt = state.Initialized,
		"ip-10-0-3-17.ec2.internal", &at, &at
	node := &corev1.Node{}
	node.Name = "ip-10-0-3-17.ec2.internal"

	cases := []struct {
		name, status, message string
		obj                   map[string]any
	}{
		{"a claim whose Node has not registered", "Progressing", "NodeNotFound: Registered is not true: Node not registered with cluster",
			object(t, "NodeClaim", NodeClaim(Claim{Record: launched}))},
		{"a claim waiting for its startup taints", "Progressing", "StartupTaintsExist: Initialized is not true: cilium.io/agent-not-ready",
			object(t, "NodeClaim", NodeClaim(Claim{Record: func() state.Claim {
				c := initialized
				c.Lifecycle, c.InitializedAt = state.Registered, nil
				return c
			}(), Node: node, Waiting: "StartupTaintsExist: cilium.io/agent-not-ready"}))},
		{"an initialized claim", "Healthy", "Ready", object(t, "NodeClaim", NodeClaim(Claim{Record: initialized, Node: node}))},
		{"a claim whose launch failed", "Degraded", "Launched is False: InsufficientCapacity: no offering had capacity",
			withConditions("NodeClaim", [4]string{"Launched", "False", "InsufficientCapacity", "no offering had capacity"},
				[4]string{"Ready", "False", "InsufficientCapacity", "Launched is not true"})},
		{"a mirror without a status yet", "Progressing", "waiting for the mirror's status",
			map[string]any{"apiVersion": APIVersion, "kind": "NodeClaim", "metadata": map[string]any{"name": "x"}}},
		{"a ready NodePool", "Healthy", "Ready", withConditions("NodePool", [4]string{"Ready", "True", "Ready", ""})},
		{"a NodePool whose class is not ready", "Degraded", "NodeClassNotReady: EC2NodeClass default is not ready",
			withConditions("NodePool", [4]string{"NodeClassReady", "False", "NodeClassNotReady", "EC2NodeClass default is not ready"},
				[4]string{"Ready", "False", "NodeClassNotReady", "EC2NodeClass default is not ready"})},
		{"a NodePool not judged yet", "Progressing", "AwaitingReconciliation",
			withConditions("NodePool", [4]string{"Ready", "Unknown", "AwaitingReconciliation", ""})},
		{"an EC2NodeClass with a missing subnet", "Degraded", "SubnetsNotFound: no subnet matches subnetSelectorTerms",
			withConditions("EC2NodeClass", [4]string{"SubnetsReady", "False", "SubnetsNotFound", "no subnet matches subnetSelectorTerms"},
				[4]string{"Ready", "False", "SubnetsNotFound", "no subnet matches subnetSelectorTerms"})},
		{"an EC2NodeClass without a Ready condition", "Progressing", "waiting for the Ready condition",
			withConditions("EC2NodeClass", [4]string{"SubnetsReady", "True", "SubnetsReady", ""})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, message := health(t, script, c.obj)
			assert.Equal(t, c.status, status)
			assert.Equal(t, c.message, message)
		})
	}
}

// TestTheREADMEEmbedsTheHealthScriptForAllThreeKinds: the argocd-cm snippet of the README, read as
// kubectl reads it, sets the script file's text as the health check of each mirrored kind.
func TestTheREADMEEmbedsTheHealthScriptForAllThreeKinds(t *testing.T) {
	script := healthScript(t)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)```yaml\n(apiVersion: v1\nkind: ConfigMap\n.*?)```").FindSubmatch(readme)
	require.NotNil(t, block, "the README has the argocd-cm ConfigMap in a yaml block")
	var cm corev1.ConfigMap
	require.NoError(t, yaml.Unmarshal(block[1], &cm))
	assert.Equal(t, "argocd-cm", cm.Name)
	for _, k := range Kinds() {
		key := "resource.customizations.health." + Group + "_" + k.Kind
		require.Contains(t, cm.Data, key)
		assert.Equal(t, strings.TrimSpace(script), strings.TrimSpace(cm.Data[key]), key)
	}
}
