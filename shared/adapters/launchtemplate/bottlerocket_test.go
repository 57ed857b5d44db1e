package launchtemplate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestBottlerocketMergeKeepsUserSettingsNodewrightWins(t *testing.T) {
	o := testOptions(apis.AMIFamilyBottlerocket)
	o.UserData = userBottlerocket
	out, err := UserData(o)
	require.NoError(t, err)
	root, err := parseTOML(out)
	require.NoError(t, err)
	settings := root["settings"].(tomlTable)
	kube := settings["kubernetes"].(tomlTable)
	assert.Equal(t, "prod", kube["cluster-name"], "Nodewright's cluster name replaces the user's")
	assert.Equal(t, int64(58), kube["max-pods"])
	assert.Equal(t, []any{"net.core.somaxconn"}, kube["allowed-unsafe-sysctls"], "other user settings are kept")
	labels := kube["node-labels"].(tomlTable)
	assert.Equal(t, "general", labels["karpenter.sh/nodepool"], "Nodewright's label wins on the same key")
	assert.Equal(t, "kept", labels["user-label"], "the user's other labels are kept")
	assert.Equal(t, tomlTable{
		"dedicated":                      []any{"payments:NoSchedule"},
		"node.cilium.io/agent-not-ready": []any{":NoExecute"},
		"karpenter.sh/unregistered":      []any{":NoExecute"},
	}, kube["node-taints"], "taints come from the NodePool only")
	assert.Equal(t, true, settings["host-containers"].(tomlTable)["admin"].(tomlTable)["enabled"])
	assert.Contains(t, settings, "bootstrap-commands")
}

func TestBottlerocketRejectsMalformedUserData(t *testing.T) {
	for name, userData := range map[string]string{
		"not TOML":                "this is not toml",
		"settings is a value":     "settings = 1\n",
		"kubernetes is a value":   "[settings]\nkubernetes = \"x\"\n",
		"node-labels is a string": "[settings.kubernetes]\nnode-labels = \"x\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			o := testOptions(apis.AMIFamilyBottlerocket)
			o.UserData = userData
			_, err := UserData(o)
			assert.Error(t, err)
		})
	}
}
