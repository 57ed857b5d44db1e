package launchtemplate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// decodeNodeConfig returns the last NodeConfig of AL2023 user data: the one nodeadm applies last.
func decodeNodeConfig(t *testing.T, userData string) map[string]any {
	t.Helper()
	parts, err := ParseMIME(userData)
	require.NoError(t, err)
	var last map[string]any
	for _, p := range parts {
		if p.ContentType() == ContentTypeNodeConfig {
			last = nil
			require.NoError(t, yaml.Unmarshal([]byte(p.Body), &last))
		}
	}
	require.NotNil(t, last, "no NodeConfig part")
	return last
}

func TestAL2023NodeConfig(t *testing.T) {
	o := testOptions(apis.AMIFamilyAL2023)
	o.UserData = userMIME
	out, err := UserData(o)
	require.NoError(t, err)
	cfg := decodeNodeConfig(t, out)
	assert.Equal(t, NodeConfigAPIVersion, cfg["apiVersion"])
	assert.Equal(t, NodeConfigKind, cfg["kind"])
	spec := cfg["spec"].(map[string]any)
	assert.Equal(t, map[string]any{"name": "prod", "apiServerEndpoint": o.Cluster.Endpoint, "certificateAuthority": testCA,
		"cidr": "10.100.0.0/16"}, spec["cluster"])
	kubelet := spec["kubelet"].(map[string]any)
	config := kubelet["config"].(map[string]any)
	assert.Equal(t, 58.0, config["maxPods"], "Nodewright's maxPods comes last, so it overrides the user's 20")
	assert.Contains(t, config["registerWithTaints"], map[string]any{"key": "karpenter.sh/unregistered", "effect": "NoExecute"})
	assert.Equal(t, []any{"--node-labels=karpenter.k8s.aws/ec2nodeclass=default,karpenter.sh/capacity-type=spot,karpenter.sh/nodepool=general,team=payments"},
		kubelet["flags"])

	parts, err := ParseMIME(out)
	require.NoError(t, err)
	require.Len(t, parts, 3, "the user's two parts, then ours")
	assert.Contains(t, parts[0].Body, "shutdownGracePeriod: 30s")
	assert.Equal(t, "#!/bin/bash\necho \"user script\"", parts[1].Body)
}

func TestAL2023PassesOtherKubeletFieldsThrough(t *testing.T) {
	o := testOptions(apis.AMIFamilyAL2023)
	o.KubeletConfig = kubelet(t, map[string]any{"shutdownGracePeriod": "45s"})
	out, err := UserData(o)
	require.NoError(t, err)
	config := decodeNodeConfig(t, out)["spec"].(map[string]any)["kubelet"].(map[string]any)["config"].(map[string]any)
	assert.Equal(t, "45s", config["shutdownGracePeriod"])
}

func TestAL2023NeedsTheServiceCIDR(t *testing.T) {
	o := testOptions(apis.AMIFamilyAL2023)
	o.Cluster.ServiceCIDR = ""
	_, err := UserData(o)
	assert.ErrorContains(t, err, "service CIDR")
}

func TestGuessAL2023(t *testing.T) {
	assert.Equal(t, ContentTypeNodeConfig, guessAL2023(userNodeConfig))
	assert.Equal(t, ContentTypeShell, guessAL2023(userShell))
	assert.Equal(t, ContentTypeShell, guessAL2023("key: value\n"), "YAML that is not a NodeConfig is not one")
	assert.Equal(t, ContentTypeCloudInit, guessAL2023("#cloud-config\nruncmd: []\n"))
}
