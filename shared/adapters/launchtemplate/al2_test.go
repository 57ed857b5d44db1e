package launchtemplate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestAL2BootstrapComesAfterTheUserParts(t *testing.T) {
	o := testOptions(apis.AMIFamilyAL2)
	o.UserData = userMIME
	out, err := UserData(o)
	require.NoError(t, err)
	parts, err := ParseMIME(out)
	require.NoError(t, err)
	require.Len(t, parts, 3)
	last := parts[2]
	assert.Equal(t, ContentTypeShell, last.ContentType())
	assert.Contains(t, last.Body, "/etc/eks/bootstrap.sh 'prod' --apiserver-endpoint 'https://ABCDEF.gr7.us-east-1.eks.amazonaws.com' --b64-cluster-ca '"+testCA+"'")
	assert.Contains(t, last.Body, "--use-max-pods false")
	assert.Contains(t, last.Body, "--register-with-taints=dedicated=payments:NoSchedule,node.cilium.io/agent-not-ready:NoExecute,karpenter.sh/unregistered:NoExecute")
	assert.Contains(t, last.Body, "--max-pods=58")
}

func TestAL2WithoutMaxPodsLetsBootstrapDecide(t *testing.T) {
	o := testOptions(apis.AMIFamilyAL2)
	o.MaxPods = nil
	out, err := UserData(o)
	require.NoError(t, err)
	assert.NotContains(t, out, "--use-max-pods")
	assert.NotContains(t, out, "--max-pods")
}

func TestAL2RefusesKubeletValuesThatWouldBreakTheScript(t *testing.T) {
	o := testOptions(apis.AMIFamilyAL2)
	o.KubeletConfig = kubelet(t, map[string]any{"kubeReserved": map[string]string{"cpu": "1' ; reboot ; '"}})
	_, err := UserData(o)
	assert.ErrorContains(t, err, "shell characters")
}
